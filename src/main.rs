use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rlsim::cli::Cli::parse();
    match rlsim::cli::execute(cli, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            // Every error rlsim reports is bad input or an unusable path: exit code 2.
            ExitCode::from(2)
        }
    }
}
