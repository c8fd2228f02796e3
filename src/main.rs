use clap::Parser;
use rlsim::cli::Status;
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: rlsim::allocator::Allocator = rlsim::allocator::ALLOCATOR;

fn main() -> ExitCode {
    rlsim::allocator::prefer_huge_pages();
    let cli = rlsim::cli::Cli::parse();
    // SIGINT, SIGTERM, SIGHUP: remove temporary files, exit 128 + signal.
    if let Err(e) = rlsim::output::install_signal_cleanup() {
        eprintln!(
            "warning: cannot handle signals ({e}); an interrupted run may leave .rlsim-* files"
        );
    }
    // Standard error stays unlocked: the progress bar draws on it from another thread.
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr());
    match rlsim::cli::execute(cli, &mut stdout, &mut stderr) {
        Ok(Status::Success) => ExitCode::SUCCESS,
        // A failed expectation or a regression: the run itself went fine, and said so.
        Ok(Status::ChecksFailed) => ExitCode::from(1),
        // The reader of a pipe went away (`| head`): it had what it wanted.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            // Red on a terminal; anstream drops the codes for a pipe or under NO_COLOR.
            let red = anstyle::AnsiColor::Red.on_default().bold();
            anstream::eprintln!("{red}error:{red:#} {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
