//! The combined log format (nginx, Apache), and the common log format, which reads the same.
//! Timestamps have one-second resolution, so the requests of one second are read together and
//! placed within it by `same_second` ([`super::seconds`]).

use super::clf_time::StampCache;
use super::format::{Detect, Format};
use super::input::{LineFormat, Lines};
use super::seconds::{Placement, Seconds};
use super::{Outcome, Record, RecordReader, field_index};
use crate::error::Result;
use crate::policy::KeyField;
use std::io::BufRead;
use std::path::Path;

pub(super) const FORMAT: Format = Format {
    name: "clf",
    aliases: &["combined"],
    title: "the combined log format",
    fields: &[KeyField::Ip, KeyField::User, KeyField::Endpoint],
    seconds_only: true,
    extensions: &["log"],
    // After nginx's back-test format, which extends this one.
    detect: Detect {
        rank: 60,
        shows: |head| head.text().is_some_and(is_clf),
    },
    open: |path, input, _, options| Ok(Box::new(Clf::new(path, input, Placement::of(options)))),
};

/// A `[date] "request"` after the first word: the combined (or common) log format's shape.
pub(super) fn is_clf(line: &str) -> bool {
    line.split_once(" [")
        .is_some_and(|(_, rest)| rest.contains("] \""))
}

/// One line of the combined log format:
/// `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326 "ref" "ua"`.
/// `ip` is the first field, `user` the third (`-` for none), `endpoint` the request's path.
#[derive(Default)]
struct ClfLine {
    stamps: StampCache,
}

impl LineFormat for ClfLine {
    fn parse(
        &mut self,
        line: &str,
        rec: &mut Record,
    ) -> std::result::Result<(), (Option<&'static str>, String)> {
        // Byte searches (`memchr`): every delimiter is ASCII, so each cut is a char boundary.
        let Some((ip, user, rest)) = cut(line, b' ').and_then(|(ip, rest)| {
            let (_ident, rest) = cut(rest, b' ')?;
            let (user, rest) = cut(rest, b' ')?;
            Some((ip, user, rest))
        }) else {
            return Err(not_clf());
        };
        let rest = rest
            .strip_prefix('[')
            .ok_or((Some("time"), "no `[` before the time".to_string()))?;
        let (stamp, rest) =
            cut(rest, b']').ok_or((Some("time"), "no `]` after the time".to_string()))?;
        rec.epoch_ns = self.stamps.parse(stamp).map_err(|m| (Some("time"), m))?;
        let request = rest
            .trim_start()
            .strip_prefix('"')
            .and_then(|r| cut(r, b'"'))
            .map(|(req, _)| req)
            .ok_or((
                Some("request"),
                "no quoted request after the time".to_string(),
            ))?;
        // The second word of the request, up to its query string.
        let path = cut(request, b' ').map_or("", |(_, r)| cut(r, b' ').map_or(r, |(p, _)| p));
        let path = cut(path, b'?').map_or(path, |(p, _)| p);
        rec.fields[field_index(KeyField::Ip)].push_str(ip);
        if user != "-" {
            rec.fields[field_index(KeyField::User)].push_str(user);
        }
        rec.fields[field_index(KeyField::Endpoint)].push_str(path);
        Ok(())
    }
}

/// `text` before and after the first `byte` (an ASCII delimiter), if it has one.
#[inline]
fn cut(text: &str, byte: u8) -> Option<(&str, &str)> {
    let i = memchr::memchr(byte, text.as_bytes())?;
    Some((&text[..i], &text[i + 1..]))
}

fn not_clf() -> (Option<&'static str>, String) {
    (
        None,
        "not a combined log line: expected `IP IDENT USER [TIME] \"REQUEST\" ...`".into(),
    )
}

/// The combined log format reader: one second's requests at a time ([`Seconds`]).
pub struct Clf(Seconds<ClfLine>);

impl Clf {
    pub fn new(path: &Path, input: Box<dyn BufRead + Send>, place: Placement) -> Clf {
        Clf(Seconds::new(
            Lines::new(path, input, ClfLine::default()),
            place,
        ))
    }
}

impl RecordReader for Clf {
    fn read(&mut self, rec: &mut Record) -> Result<Outcome> {
        self.0.read(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The line parser as it was written with `str` splitting, kept as the reference.
    fn reference(line: &str) -> std::result::Result<[String; 3], Option<&'static str>> {
        let mut parts = line.splitn(4, ' ');
        let (Some(ip), Some(_), Some(user), Some(rest)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(None);
        };
        let rest = rest.strip_prefix('[').ok_or(Some("time"))?;
        let (stamp, rest) = rest.split_once(']').ok_or(Some("time"))?;
        super::super::clf_time::slow(stamp).map_err(|_| Some("time"))?;
        let request = rest
            .trim_start()
            .strip_prefix('"')
            .and_then(|r| r.split_once('"'))
            .map(|(req, _)| req)
            .ok_or(Some("request"))?;
        let path = request.split(' ').nth(1).unwrap_or("");
        let user = if user == "-" { "" } else { user };
        Ok([ip, user, path.split('?').next().unwrap_or("")].map(str::to_string))
    }

    proptest! {
        /// Lines cut from the pieces of a combined log line (and odd ones): the byte parser
        /// takes the same fields, and fails on the same field, as the reference.
        #[test]
        fn parses_like_the_str_splitting_reference(
            pieces in proptest::collection::vec(prop_oneof![
                Just("1.2.3.4"), Just(" "), Just("  "), Just("-"), Just("frank"), Just("["),
                Just("]"), Just("10/Oct/2000:13:55:36 -0700"), Just("\""), Just("GET"),
                Just("/a?b=c"), Just("?"), Just("HTTP/1.1"), Just("é"), Just("\t"),
            ], 0..16),
        ) {
            let line = pieces.concat();
            let mut rec = Record::default();
            let got = ClfLine::default().parse(&line, &mut rec).map_err(|(field, _)| field).map(|()| {
                [KeyField::Ip, KeyField::User, KeyField::Endpoint]
                    .map(|f| rec.fields[field_index(f)].clone())
            });
            prop_assert_eq!(got, reference(&line));
        }

        /// Well-formed lines, for coverage of the success path.
        #[test]
        fn reads_well_formed_lines(
            ip in "[0-9a-f.:]{1,20}",
            user in "-|[a-z]{1,5}",
            path in "/[a-z/]{0,8}(\\?[a-z=&]{0,6})?",
            more in "( HTTP/1\\.[01])?",
        ) {
            let line = format!("{ip} - {user} [10/Oct/2000:13:55:36 -0700] \"GET {path}{more}\" 200 1");
            let mut rec = Record::default();
            prop_assert!(ClfLine::default().parse(&line, &mut rec).is_ok());
            prop_assert_eq!(
                Ok([KeyField::Ip, KeyField::User, KeyField::Endpoint]
                    .map(|f| rec.fields[field_index(f)].clone())),
                reference(&line)
            );
        }
    }
}
