use clap::Parser;
use rlsim::cli::Status;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rlsim::cli::Cli::parse();
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr().lock());
    match rlsim::cli::execute(cli, &mut stdout, &mut stderr) {
        Ok(Status::Success) => ExitCode::SUCCESS,
        // A failed expectation or a regression: the run itself went fine, and said so.
        Ok(Status::ChecksFailed) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
