//! Pieces the native log formats share: a URL's path, an address without its port, RFC 3339
//! timestamps, and the quoted, space-separated fields of ALB and Envoy lines.

use chrono::DateTime;

/// The path of a logged URL: `http://host:80/a/b?q=1` and `/a/b?q=1` both give `/a/b` (the
/// endpoint a policy keys on has no query string); `*` or an empty path gives `/`.
pub(super) fn url_path(url: &str) -> &str {
    let rest = match url.find("://") {
        Some(i) => {
            let after = &url[i + 3..];
            after.find('/').map_or("", |j| &after[j..])
        }
        None => url,
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    match &rest[..end] {
        "" => "/",
        path => path,
    }
}

/// An address as logged with its port (`192.0.2.1:2817`, `[2001:db8::1]:443`), without it; an
/// address without a port is returned as is.
pub(super) fn without_port(addr: &str) -> &str {
    if let Some(rest) = addr.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(ip, _)| ip);
    }
    match addr.rsplit_once(':') {
        // One colon: `ip:port`; more: a bare IPv6 address.
        Some((ip, port)) if !ip.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => ip,
        _ => addr,
    }
}

/// An RFC 3339 timestamp (a fraction of a second of up to 9 digits) as nanoseconds since the
/// Unix epoch.
pub(super) fn rfc3339(raw: &str) -> Result<u64, String> {
    // chrono reads any number of fraction digits and drops those past nanoseconds: a time finer
    // than nanoseconds is no log's, so it is refused rather than silently cut.
    // `YYYY-MM-DDTHH:MM:SS` is 19 bytes: a fraction's point is the 20th (a replay reads
    // millions of timestamps: no search).
    let bytes = raw.as_bytes();
    if bytes.get(19) == Some(&b'.') {
        let digits = bytes[20..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > 9 {
            return Err(format!(
                "`{raw}` has {digits} digits of a second (at most 9: nanoseconds)"
            ));
        }
    }
    let dt = DateTime::parse_from_rfc3339(raw)
        .map_err(|e| format!("`{raw}` is not an RFC 3339 timestamp ({e})"))?;
    dt.timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("`{raw}` is outside the supported range (1970 to 2262)"))
}

/// Splits a line of space-separated fields where a field may be `"quoted"` (with `\"` inside),
/// as ALB and Envoy write them, into `out` (the first `N`; the rest are not read); quotes are
/// removed. The number of fields, or `None` if a quote is not closed.
pub(super) fn quoted_fields<'a, const N: usize>(
    line: &'a str,
    out: &mut [&'a str; N],
) -> Option<usize> {
    let bytes = line.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < bytes.len() && n < N {
        if bytes[i] == b' ' {
            i += 1;
            continue;
        }
        if bytes[i] == b'"' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            if j >= bytes.len() {
                return None;
            }
            out[n] = &line[start..j];
            i = j + 1;
        } else {
            let end = memchr::memchr(b' ', &bytes[i..]).map_or(bytes.len(), |k| i + k);
            out[n] = &line[i..end];
            i = end;
        }
        n += 1;
    }
    Some(n)
}

/// A JSON line's parse error without serde_json's `at line 1 column N`, which would contradict
/// the file's own line number the error is reported with: the column alone.
/// serde's type names in it are said in words.
pub(super) fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let message = in_words(message);
    if e.column() == 0 {
        message
    } else {
        format!("{message} (column {})", e.column())
    }
}

/// serde's `invalid type: integer `5`, expected u64` as `found the number 5, expected a whole
/// number from 0 to 18446744073709551615`.
fn in_words(message: &str) -> String {
    const FOUND: [(&str, &str); 10] = [
        ("invalid type: integer ", "found the number "),
        ("invalid type: floating point ", "found the number "),
        ("invalid type: string ", "found the string "),
        ("invalid type: boolean ", "found "),
        ("invalid type: null", "found null"),
        ("invalid type: map", "found an object"),
        ("invalid type: sequence", "found an array"),
        ("invalid value: integer ", "found "),
        ("invalid length ", "found an array of length "),
        ("invalid type: ", "found "),
    ];
    const EXPECTED: [(&str, &str); 6] = [
        (
            "expected u64",
            "expected a whole number from 0 to 18446744073709551615",
        ),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u8", "expected a whole number from 0 to 255"),
        (
            "expected i64",
            "expected a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        ("expected f64", "expected a number"),
    ];
    let mut out = message.to_string();
    if let Some((from, to)) = FOUND.iter().find(|(from, _)| out.starts_with(from)) {
        let rest = &out[from.len()..];
        // A value in backticks (`5`, `true`) reads as itself.
        let rest = match rest.strip_prefix('`').and_then(|r| r.split_once('`')) {
            Some((value, after)) => format!("{value}{after}"),
            None => rest.to_string(),
        };
        out = format!("{to}{rest}");
    }
    if let Some((from, to)) = EXPECTED.iter().find(|(from, _)| out.ends_with(from)) {
        out = format!("{}{to}", &out[..out.len() - from.len()]);
    }
    out.replace("number `", "number ")
        .replace("`, expected", ", expected")
}

/// The field of a JSON line that failed to read as `T`, among the `fields` a reader names (dotted
/// paths, `httpRequest.status`; an array's element is named by its array), found by reading the
/// line again with `serde_path_to_error`: only a bad line pays for the path.
pub(super) fn json_field<'de, T: serde::Deserialize<'de>>(
    line: &'de str,
    fields: &[&'static str],
) -> Option<&'static str> {
    let mut de = serde_json::Deserializer::from_str(line);
    let Err(e) = serde_path_to_error::deserialize::<_, T>(&mut de) else {
        return None;
    };
    let path = e.path().to_string();
    let path = path.split('[').next().unwrap_or("");
    fields.iter().copied().find(|f| *f == path)
}

/// `-` (and empty) is a field a log leaves unset.
pub(super) fn unset(raw: &str) -> bool {
    raw.is_empty() || raw == "-"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_ports_and_quoted_fields() {
        assert_eq!(url_path("http://www.example.com:80/a/b?x=1"), "/a/b");
        assert_eq!(url_path("https://h/"), "/");
        assert_eq!(url_path("https://h"), "/");
        assert_eq!(url_path("/c?d#e"), "/c");
        assert_eq!(url_path("-"), "-");
        assert_eq!(without_port("192.168.131.39:2817"), "192.168.131.39");
        assert_eq!(without_port("[2001:db8::1]:443"), "2001:db8::1");
        assert_eq!(without_port("2001:db8::1"), "2001:db8::1");
        assert_eq!(without_port("10.0.0.1"), "10.0.0.1");
        assert_eq!(rfc3339("1970-01-01T00:00:01.000000500Z"), Ok(1_000_000_500));
        assert!(
            rfc3339("1970-01-01T00:00:01.0000005001Z")
                .unwrap_err()
                .contains("10 digits of a second")
        );
        let mut out = [""; 6];
        assert_eq!(quoted_fields(r#"a "b c" "" "d\"e" f"#, &mut out), Some(5));
        assert_eq!(out, ["a", "b c", "", r#"d\"e"#, "f", ""]);
        assert_eq!(quoted_fields(r#"a "b"#, &mut out), None);
        let mut two = [""; 2];
        assert_eq!(quoted_fields("a b c", &mut two), Some(2));
    }

    #[test]
    fn json_errors_name_the_column_not_a_line() {
        let e = serde_json::from_str::<serde_json::Value>("{\"a\": tru}").unwrap_err();
        assert_eq!(json_error(&e), "expected ident (column 10)");
        let e = serde_json::from_str::<u8>("").unwrap_err();
        assert_eq!(json_error(&e), "EOF while parsing a value");
        let e = serde_json::from_str::<u64>("\"x\"").unwrap_err();
        assert_eq!(
            json_error(&e),
            "found the string \"x\", expected a whole number from 0 to 18446744073709551615 (column 3)"
        );
        let e = serde_json::from_str::<String>("5").unwrap_err();
        assert_eq!(
            json_error(&e),
            "found the number 5, expected a string (column 1)"
        );
        let e = serde_json::from_str::<u16>("-1").unwrap_err();
        assert_eq!(
            json_error(&e),
            "found -1, expected a whole number from 0 to 65535 (column 2)"
        );
        let e = serde_json::from_str::<String>("{}").unwrap_err();
        assert_eq!(json_error(&e), "found an object, expected a string");
    }
}
