//! AWS Application Load Balancer access logs: one request per line, space-separated fields,
//! some quoted (`type time elb client:port target:port ... elb_status_code target_status_code
//! ... "request" "user_agent" ... request_creation_time "actions_executed" ...`, as the ALB
//! documentation lists them; later fields AWS appends are ignored).
//!
//! `time` is `request_creation_time` (when the balancer received the request, microseconds),
//! or the `time` field (when it answered) in a log without it. `ip` is `client:port`'s address,
//! `endpoint` the request URL's path, `method` its method, `status` `elb_status_code`. The
//! recorded decision is AWS WAF's, when `actions_executed` has `waf`: a 403 is refused, anything
//! else admitted (a WAF rate-based rule blocks with 403; another WAF rule's block reads the same).

use super::common::{quoted_fields, rfc3339, unset, url_path, without_port};
use super::input::{LineError, LineFormat, Lines};
use super::{Outcome, Production, Record, RecordReader, field_index, parse_method, parse_status};
use crate::error::Result;
use crate::policy::KeyField;
use std::io::BufRead;
use std::path::Path;

/// The ALB fields rlsim reads, by position.
const TIME: usize = 1;
const CLIENT: usize = 3;
const ELB_STATUS: usize = 8;
const REQUEST: usize = 12;
const CREATED: usize = 21;
const ACTIONS: usize = 22;

/// Fields read from a line: the ALB fields up to `actions_executed`.
const READ: usize = ACTIONS + 1;

pub struct Alb;

pub fn reader(path: &Path, input: Box<dyn BufRead + Send>) -> Lines<Alb> {
    Lines::new(path, input, Alb)
}

impl LineFormat for Alb {
    fn parse(&mut self, line: &str, rec: &mut Record) -> std::result::Result<(), LineError> {
        let mut f = [""; READ];
        let n = quoted_fields(line, &mut f)
            .ok_or((None, "a quoted field is not closed".to_string()))?;
        if n <= REQUEST {
            return Err((
                None,
                format!(
                    "{n} fields where an ALB log line has at least {} (type time elb client:port ... \"request\")",
                    REQUEST + 1
                ),
            ));
        }
        let (stamp, name) = match f[CREATED] {
            created if n > CREATED && !unset(created) => (created, "request_creation_time"),
            _ => (f[TIME], "time"),
        };
        rec.epoch_ns = rfc3339(stamp).map_err(|m| (Some(name), m))?;
        if !unset(f[CLIENT]) {
            rec.fields[field_index(KeyField::Ip)].push_str(without_port(f[CLIENT]));
        }
        rec.status = parse_status(f[ELB_STATUS]).map_err(|m| (Some("elb_status_code"), m))?;
        let mut request = f[REQUEST].split(' ');
        let (method, url) = (request.next().unwrap_or(""), request.next().unwrap_or(""));
        if url.is_empty() && !unset(method) {
            return Err((
                Some("request"),
                format!("`{}` is not `METHOD URL PROTOCOL`", f[REQUEST]),
            ));
        }
        rec.method = parse_method(method);
        if !unset(url) {
            rec.fields[field_index(KeyField::Endpoint)].push_str(url_path(url));
        }
        if f[ACTIONS].split(',').any(|a| a == "waf") {
            rec.production = Some(if rec.status == Some(403) {
                Production::Refused
            } else {
                Production::Admitted
            });
        }
        Ok(())
    }
}

impl RecordReader for Lines<Alb> {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        Lines::read(self, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{bad_lines, read_text};
    use super::super::{Production, TraceFormat};
    use crate::traffic::method::Method;

    const LINE: &str = r#"http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/api/items?id=3 HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-""#;

    #[test]
    fn reads_the_documented_fields() {
        let blocked = LINE
            .replace(" 200 200 34", " 403 - 34")
            .replace("\"forward\"", "\"waf\"")
            .replace("GET http", "POST http");
        let recs = read_text(TraceFormat::Alb, &format!("{LINE}\n{blocked}\n"));
        let r = &recs[0];
        assert_eq!(r.epoch_ns, 1_530_570_168_364_000_000);
        assert_eq!(
            r.fields,
            ["192.168.131.39", "", "", "/api/items"].map(String::from)
        );
        assert_eq!(
            (r.status, r.method, r.production),
            (Some(200), Some(Method::Get), None)
        );
        let b = &recs[1];
        assert_eq!(
            (b.status, b.method, b.production),
            (Some(403), Some(Method::Post), Some(Production::Refused))
        );
    }

    #[test]
    fn bad_lines_name_their_field() {
        let bad = bad_lines(
            TraceFormat::Alb,
            "",
            &[
                ("http 2018 app/x 1.2.3.4:5 - 0 0 0 200 200 1 1", None),
                (
                    &LINE.replace("2018-07-02T22:22:48.364000Z", "yesterday"),
                    Some("request_creation_time"),
                ),
                (
                    &LINE.replace(" 200 200 34", " 2000 200 34"),
                    Some("elb_status_code"),
                ),
                (
                    "http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 \"GET / HTTP/1.1",
                    None,
                ),
            ],
        );
        assert_eq!(bad, 4);
    }
}
