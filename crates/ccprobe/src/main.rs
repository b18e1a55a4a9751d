//! `ccprobe server ...` / `ccprobe client ...`: see the crate docs and `--help`.

use ccprobe::{client, server};

const USAGE: &str = "ccprobe: path loss-process probe (Wei thesis §4.3)\n\
usage: ccprobe server [options]   (ccprobe server --help)\n       ccprobe client [options]   (ccprobe client --help)";

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let help = argv.iter().any(|a| a == "--help" || a == "-h");
    let result = match argv.first().map(|s| s.as_str()) {
        Some("server") if help => {
            println!("{}", server::SERVER_USAGE);
            Ok(())
        }
        Some("client") if help => {
            println!("{}", client::CLIENT_USAGE);
            Ok(())
        }
        Some("server") => server::ServerConfig::from_args(&argv[1..]).and_then(server::run),
        Some("client") => client::ClientConfig::from_args(&argv[1..]).and_then(|c| client::run(c).map(|_| ())),
        None | Some("--help") | Some("-h") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command '{other}' (expected server or client)")),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
