//! The last lines of `cargo test`: which tests were skipped for want of an external tool, and
//! how to install it (tests/integration/external.rs). Named to run after every other test
//! binary; without a harness, so its output is shown.

#[path = "integration/external.rs"]
#[allow(dead_code, unused_imports)]
mod external;

fn main() {
    let cargo = std::os::unix::process::parent_id();
    let log = external::log_for(cargo);
    match std::fs::read_to_string(&log) {
        Ok(text) => {
            match external::summary(&text) {
                Some(summary) => print!("\n{summary}"),
                None => println!("\nNo test was skipped for want of an external tool."),
            }
            // Read once: the next `cargo test` starts a log of its own.
            let _ = std::fs::remove_file(&log);
        }
        Err(_) => println!("\nNo test was skipped for want of an external tool."),
    }
}
