//! Output destinations: the one owner of the paths rlsim writes and of its temporary files.
//!
//! A regular file, or a path that does not exist yet, is written beside itself under a temporary
//! name (`.rlsim-XXXXXX`) and renamed into place once complete, so a reader never sees half an
//! output. Anything else a path can name (a device such as `/dev/null` or `/dev/full`, a FIFO) is
//! written directly: renaming over it would replace the device with a plain file. `-` means
//! standard output for the flags that say so.
//!
//! Every temporary file is registered while it lives; [`install_signal_cleanup`] removes the
//! registered files when SIGINT, SIGTERM or SIGHUP ends the process.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Temporary files alive now. Creation, rename and removal happen under this lock, so the signal
/// handler sees every file that exists and none is created after it has cleaned up.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Directories created to hold temporary files, outermost first. Those still empty are removed
/// when a temporary file is discarded and when a signal stops the process, so a failed run
/// leaves no empty directory behind (`--decisions new/dir/log.csv`).
static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn created() -> MutexGuard<'static, Vec<PathBuf>> {
    CREATED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `create_dir_all(dir)`, registering the directories it creates.
fn create_dirs(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut d = dir;
    while !d.as_os_str().is_empty() && !d.exists() {
        missing.push(d.to_path_buf());
        match d.parent() {
            Some(parent) => d = parent,
            None => break,
        }
    }
    std::fs::create_dir_all(dir)?;
    let mut dirs = created();
    for d in missing.into_iter().rev() {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    Ok(())
}

/// Removes the registered directories that are empty, innermost first (a directory holding an
/// output, or another live temporary file, is not empty and stays).
fn remove_empty_dirs() {
    let mut dirs = created();
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    dirs.retain(|d| d.exists());
}

/// Other cleanups to run on those signals (e.g. the keys a run wrote into an external store).
static ON_SIGNAL: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `hook` to run when a signal ends the process (once, however often registered).
pub fn on_signal(hook: fn()) {
    let mut hooks = ON_SIGNAL.lock().unwrap_or_else(|p| p.into_inner());
    if !hooks.contains(&hook) {
        hooks.push(hook);
    }
}

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every live temporary file and exits with `128 + signal` on SIGINT (130), SIGTERM (143)
/// or SIGHUP (129). For the binary: a library caller keeps its own signal disposition.
pub fn install_signal_cleanup() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("rlsim-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // The guard is held until exit: no temporary file can appear after the cleanup.
                let files = live();
                for path in files.iter() {
                    let _ = std::fs::remove_file(path);
                }
                remove_empty_dirs();
                for hook in ON_SIGNAL.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    hook();
                }
                let name = match signal {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                eprintln!("rlsim: stopped by {name}; no output was left half-written");
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// `tempfile`'s errors name the temporary path (`MESSAGE at path "/dir/.rlsim-XXXXXX"`); the
/// user knows only their own path, which the caller adds. The wrapper hides the OS error, so the
/// message is cut at its suffix.
fn plain(e: io::Error) -> io::Error {
    if let Some(code) = e.raw_os_error() {
        return io::Error::from_raw_os_error(code);
    }
    let message = e.to_string();
    match message.find(" at path \"") {
        Some(end) => io::Error::new(e.kind(), &message[..end]),
        None => e,
    }
}

/// A registered temporary file, deleted when dropped unless persisted.
pub struct TempFile {
    file: Option<tempfile::NamedTempFile>,
}

impl TempFile {
    /// A new temporary file in `dir`, which is created if missing. Outputs are ordinary readable
    /// files (0644 before the umask), not the private 0600 of a temporary file.
    pub fn new_in(dir: &Path) -> io::Result<TempFile> {
        create_dirs(dir)?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(".rlsim-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let mut files = live();
        let file = builder.tempfile_in(dir).map_err(plain)?;
        files.push(file.path().to_path_buf());
        Ok(TempFile { file: Some(file) })
    }

    fn inner(&self) -> &tempfile::NamedTempFile {
        self.file
            .as_ref()
            .expect("present until persisted or dropped")
    }

    fn inner_mut(&mut self) -> &mut tempfile::NamedTempFile {
        self.file
            .as_mut()
            .expect("present until persisted or dropped")
    }

    /// A second handle on the file, to read back what was written.
    pub fn reopen(&self) -> io::Result<File> {
        self.inner().reopen().map_err(plain)
    }

    /// Renames the file to `to`, atomically replacing what was there.
    pub fn persist(self, to: &Path) -> io::Result<()> {
        self.persist_in(to, &mut live())
    }

    /// [`TempFile::persist`] with the registry's lock already held (`files`).
    fn persist_in(mut self, to: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
        let file = self
            .file
            .take()
            .expect("present until persisted or dropped");
        let path = file.path().to_path_buf();
        // Renamed, or deleted with the error's file: gone from the registry either way.
        let result = file.persist(to).map(drop).map_err(|e| plain(e.error));
        files.retain(|p| *p != path);
        result
    }
}

/// Files that make one output together (a `--out` directory): each is written in full under a
/// temporary name by [`Batch::add`], and [`Batch::commit`] renames them all into place only once
/// every one is on disk. A full disk or an error part way leaves none of the new files (the
/// temporary ones are removed when the batch is dropped) and whatever an earlier run wrote
/// untouched; a signal during the commit waits for it to end.
#[derive(Default)]
pub struct Batch {
    staged: Vec<(TempFile, Destination)>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Writes `bytes` as the file that [`Batch::commit`] will put at `path` (its directory is
    /// created if missing). A device or FIFO is written at once: it cannot be renamed over.
    pub fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        let destination = Destination::file(path)?;
        if destination.kind() != Kind::Replace {
            return destination.write_all(bytes, &mut io::sink());
        }
        let mut file = destination.scratch_file()?;
        file.write_all(bytes)
            .and_then(|()| file.flush())
            .map_err(|e| destination.err(e))?;
        self.staged.push((file, destination));
        Ok(())
    }

    /// Renames every staged file into place, in the order added.
    pub fn commit(self) -> Result<()> {
        let mut staged = self.staged.into_iter();
        // Held throughout: the signal handler, which takes it too, cannot stop a commit halfway.
        let mut files = live();
        let mut failure = None;
        for (file, destination) in staged.by_ref() {
            if let Err(e) = file.persist_in(&destination.target, &mut files) {
                failure = Some(destination.err(e));
                break;
            }
        }
        // Released before the files not renamed are dropped: dropping one takes the lock.
        drop(files);
        drop(staged);
        failure.map_or(Ok(()), Err)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut files = live();
            let path = file.path().to_path_buf();
            drop(file);
            files.retain(|p| *p != path);
            remove_empty_dirs();
        }
    }
}

impl Write for TempFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner_mut().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner_mut().flush()
    }
}

/// How a destination is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Standard output (`-`).
    Stdout,
    /// A device or FIFO: opened and written in place, never replaced.
    Direct,
    /// A regular file or a new path: written beside it, then renamed over it.
    Replace,
}

/// Where one output goes, decided before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The path as the user gave it, for messages.
    path: PathBuf,
    /// The file to rename onto: the path, or the file a symbolic link names (a link to an
    /// output is kept, its target replaced).
    target: PathBuf,
    kind: Kind,
}

impl Destination {
    /// A destination where `-` means standard output.
    pub fn or_stdout(path: &Path) -> Result<Destination> {
        if path == Path::new("-") {
            return Ok(Destination {
                path: PathBuf::from("<stdout>"),
                target: PathBuf::new(),
                kind: Kind::Stdout,
            });
        }
        Destination::file(path)
    }

    /// A file destination (`-` is a file named `-`).
    pub fn file(path: &Path) -> Result<Destination> {
        let kind = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(Error::Usage(format!(
                    "{}: is a directory, not a file",
                    path.display()
                )));
            }
            Ok(m) if m.is_file() => Kind::Replace,
            Ok(_) => Kind::Direct,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Kind::Replace,
            Err(e) => return Err(Error::io(path, e)),
        };
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = match kind {
            Kind::Replace if is_link => std::fs::canonicalize(path).unwrap_or(path.to_path_buf()),
            _ => path.to_path_buf(),
        };
        Ok(Destination {
            path: path.to_path_buf(),
            target,
            kind,
        })
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The path as given (`<stdout>` for standard output), for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses a destination that is one of the run's input files: writing it would destroy
    /// the input (`flag` names the option in the message).
    pub fn refuse_inputs<'p>(
        &self,
        flag: &str,
        inputs: impl IntoIterator<Item = &'p Path>,
    ) -> Result<()> {
        if self.kind == Kind::Stdout {
            return Ok(());
        }
        for input in inputs {
            if same_file(&self.path, input) {
                return Err(Error::Usage(format!(
                    "{flag} {}: is an input of this run ({}); refusing to overwrite it",
                    self.path.display(),
                    input.display()
                )));
            }
        }
        Ok(())
    }

    /// A directory for scratch files that belong to this output: beside a file that will be
    /// renamed into place (same file system), the system's temporary directory otherwise (never
    /// `/dev` for `/dev/null`).
    pub fn scratch_dir(&self) -> PathBuf {
        match self.kind {
            Kind::Replace => parent(&self.target),
            Kind::Direct | Kind::Stdout => std::env::temp_dir(),
        }
    }

    /// A registered temporary file in [`Destination::scratch_dir`].
    pub fn scratch_file(&self) -> Result<TempFile> {
        let dir = self.scratch_dir();
        TempFile::new_in(&dir).map_err(|e| self.err(e))
    }

    /// Opens the destination for writing; [`Output::finish`] completes it.
    pub fn create<'a>(&'a self, stdout: &'a mut dyn Write) -> Result<Output<'a>> {
        let sink = match self.kind {
            Kind::Stdout => Sink::Stdout(stdout),
            Kind::Direct => Sink::Direct(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .map_err(|e| self.err(e))?,
            ),
            Kind::Replace => Sink::Temp(self.scratch_file()?),
        };
        Ok(Output {
            destination: self,
            writer: BufWriter::with_capacity(1 << 16, sink),
        })
    }

    /// Writes `bytes` as the whole output.
    pub fn write_all(&self, bytes: &[u8], stdout: &mut dyn Write) -> Result<()> {
        let mut out = self.create(stdout)?;
        out.write_all(bytes).map_err(|e| self.err(e))?;
        out.finish()
    }

    /// An I/O error on this destination, naming the user's path.
    pub fn err(&self, e: io::Error) -> Error {
        Error::io(&self.path, e)
    }
}

/// Whether two paths name one file. By metadata, never by opening: opening a FIFO blocks.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
    }
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

enum Sink<'a> {
    Stdout(&'a mut dyn Write),
    Direct(File),
    Temp(TempFile),
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::Direct(f) => f.write(buf),
            Sink::Temp(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::Direct(f) => f.flush(),
            Sink::Temp(t) => t.flush(),
        }
    }
}

/// An output being written. Dropped without [`Output::finish`], a renamed output never appears.
pub struct Output<'a> {
    destination: &'a Destination,
    writer: BufWriter<Sink<'a>>,
}

impl Output<'_> {
    /// Flushes everything (a full disk or a closed pipe is an error here) and, for a regular
    /// file, renames it into place.
    pub fn finish(self) -> Result<()> {
        let d = self.destination;
        let sink = self
            .writer
            .into_inner()
            .map_err(|e| d.err(e.into_error()))?;
        match sink {
            Sink::Stdout(w) => w.flush().map_err(|e| d.err(e)),
            // Direct writes are unbuffered below the BufWriter: nothing more to flush.
            Sink::Direct(_) => Ok(()),
            Sink::Temp(t) => t.persist(&d.target).map_err(|e| d.err(e)),
        }
    }
}

impl Write for Output<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(path: &Path) -> bool {
        live().iter().any(|p| p == path)
    }

    /// A batch that fails part way leaves none of its files, and no temporary file; one that
    /// commits puts them all in place.
    #[test]
    fn a_batch_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("sub/a.txt");
        std::fs::create_dir(dir.path().join("dir")).unwrap();
        let mut batch = Batch::new();
        batch.add(&a, b"first").unwrap();
        assert!(!a.exists(), "staged, not yet in place");
        let err = batch.add(&dir.path().join("dir"), b"x").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        drop(batch);
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["dir"], "sub/ was created for the batch and is gone");
        let mut batch = Batch::new();
        batch.add(&a, b"first").unwrap();
        batch.add(&dir.path().join("b.txt"), b"second").unwrap();
        batch.commit().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"first");
        assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"second");
        assert!(!live().iter().any(|p| p.starts_with(dir.path())));
    }

    #[test]
    fn temp_files_are_registered_while_they_live() {
        let dir = tempfile::tempdir().unwrap();
        let t = TempFile::new_in(dir.path()).unwrap();
        let path = t.inner().path().to_path_buf();
        assert!(registered(&path) && path.exists());
        drop(t);
        assert!(!registered(&path) && !path.exists());

        let mut t = TempFile::new_in(dir.path()).unwrap();
        let path = t.inner().path().to_path_buf();
        t.write_all(b"x").unwrap();
        t.persist(&dir.path().join("out")).unwrap();
        assert!(!registered(&path) && !path.exists());
        assert_eq!(std::fs::read(dir.path().join("out")).unwrap(), b"x");
    }

    #[test]
    fn kinds() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.csv");
        assert_eq!(Destination::file(&new).unwrap().kind(), Kind::Replace);
        std::fs::write(&new, "old").unwrap();
        assert_eq!(Destination::file(&new).unwrap().kind(), Kind::Replace);
        let dev = Destination::file(Path::new("/dev/null")).unwrap();
        assert_eq!(dev.kind(), Kind::Direct);
        assert_eq!(dev.scratch_dir(), std::env::temp_dir());
        let stdout = Destination::or_stdout(Path::new("-")).unwrap();
        assert_eq!(stdout.kind(), Kind::Stdout);
        assert_eq!(
            Destination::file(Path::new("-")).unwrap().kind(),
            Kind::Replace
        );
        let e = Destination::file(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn a_link_to_an_output_is_kept_and_its_target_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.csv");
        let link = dir.path().join("link.csv");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let d = Destination::file(&link).unwrap();
        d.write_all(b"new", &mut io::sink()).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn a_full_device_is_an_error_naming_it() {
        let d = Destination::file(Path::new("/dev/full")).unwrap();
        let e = d.write_all(b"x", &mut io::sink()).unwrap_err().to_string();
        assert!(e.starts_with("/dev/full: "), "{e}");
        assert!(!e.contains(".rlsim-"), "{e}");
    }

    #[test]
    fn inputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s.toml");
        std::fs::write(&input, "x").unwrap();
        let via = dir.path().join(".").join("s.toml");
        let d = Destination::file(&via).unwrap();
        let e = d
            .refuse_inputs("--decisions", [input.as_path()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is an input of this run"), "{e}");
        let other = Destination::file(&dir.path().join("o.csv")).unwrap();
        assert!(
            other
                .refuse_inputs("--decisions", [input.as_path()])
                .is_ok()
        );
    }
}
