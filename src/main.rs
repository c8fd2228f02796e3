use clap::Parser;
use rlsim::cli::Status;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rlsim::cli::Cli::parse();
    // Standard error stays unlocked: the progress bar draws on it from another thread.
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr());
    match rlsim::cli::execute(cli, &mut stdout, &mut stderr) {
        Ok(Status::Success) => ExitCode::SUCCESS,
        // A failed expectation or a regression: the run itself went fine, and said so.
        Ok(Status::ChecksFailed) => ExitCode::from(1),
        Err(e) => {
            // Red on a terminal; anstream drops the codes for a pipe or under NO_COLOR.
            let red = anstyle::AnsiColor::Red.on_default().bold();
            anstream::eprintln!("{red}error:{red:#} {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
