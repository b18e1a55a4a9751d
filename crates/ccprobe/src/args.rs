//! A small command-line parser: `--name value`, `--name=value` and flags. Errors are one
//! line that names the option.

use std::collections::HashMap;

#[derive(Debug)]
pub struct Args {
    values: HashMap<String, String>,
    flags: Vec<String>,
}

impl Args {
    /// `takes_value`: options that take a value; `flags`: options that do not.
    pub fn parse(argv: &[String], takes_value: &[&str], flags: &[&str]) -> Result<Args, String> {
        let mut values = HashMap::new();
        let mut set_flags = Vec::new();
        let mut i = 0;
        while i < argv.len() {
            let a = &argv[i];
            if !a.starts_with("--") {
                return Err(format!("unexpected argument '{a}' (options start with --)"));
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (a.clone(), None),
            };
            if flags.contains(&name.as_str()) {
                if inline.is_some() {
                    return Err(format!("{name} takes no value"));
                }
                set_flags.push(name);
            } else if takes_value.contains(&name.as_str()) {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        i += 1;
                        argv.get(i).cloned().ok_or_else(|| format!("{name} needs a value"))?
                    }
                };
                if values.insert(name.clone(), v).is_some() {
                    return Err(format!("{name} given twice"));
                }
            } else {
                let mut known: Vec<&str> = takes_value.iter().chain(flags.iter()).copied().collect();
                known.sort_unstable();
                return Err(format!("unknown option '{name}' (known: {})", known.join(" ")));
            }
            i += 1;
        }
        Ok(Args { values, flags: set_flags })
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|s| s.as_str())
    }

    pub fn f64_or(&self, name: &str, default: f64, what: &str) -> Result<f64, String> {
        match self.str(name) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(format!("{name}: expected {what}, got '{v}'")),
            },
        }
    }

    pub fn u64_or(&self, name: &str, default: u64, what: &str) -> Result<u64, String> {
        match self.str(name) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().map_err(|_| format!("{name}: expected {what}, got '{v}'")),
        }
    }
}

pub fn check_range(name: &str, x: f64, lo: f64, hi: f64, what: &str) -> Result<f64, String> {
    if x < lo || x > hi {
        Err(format!("{name}: {what} must be between {lo} and {hi}, got {x}"))
    } else {
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_and_rejects() {
        let a =
            Args::parse(&v(&["--rate", "5", "--size=100", "--quiet"]), &["--rate", "--size"], &["--quiet"]).unwrap();
        assert_eq!(a.f64_or("--rate", 1.0, "x").unwrap(), 5.0);
        assert_eq!(a.u64_or("--size", 48, "x").unwrap(), 100);
        assert!(a.flag("--quiet"));
        assert!(Args::parse(&v(&["--bogus"]), &["--rate"], &[]).unwrap_err().contains("unknown option '--bogus'"));
        assert!(Args::parse(&v(&["--rate"]), &["--rate"], &[]).unwrap_err().contains("needs a value"));
        let a = Args::parse(&v(&["--rate", "abc"]), &["--rate"], &[]).unwrap();
        assert!(a.f64_or("--rate", 1.0, "packets per second").unwrap_err().contains("got 'abc'"));
    }
}
