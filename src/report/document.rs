//! A small document model rendered as Markdown and as self-contained HTML, so `report.md` and
//! `report.html` cannot say different things.
//!
//! Inline markup is the Markdown subset both can carry: `` `code` ``, `**bold**` and
//! `[text](target)` links. HTML renders it as elements and the terminal reads it through
//! [`plain`], so neither shows a backtick or an asterisk of markup. Every HTML heading has an id
//! (the slug GitHub gives the same Markdown heading) and a link to itself.

use super::charts::{Chart, escape};
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(u8, String),
    Paragraph(String),
    /// Header and rows; columns after the first are right-aligned (numbers).
    Table(Vec<String>, Vec<Vec<String>>),
    /// An ordered list when `true`.
    List(bool, Vec<String>),
    /// A chart: a link to `charts/<file>` in Markdown, the SVG itself in HTML.
    Figure(Chart),
    /// Preformatted text.
    Code(String),
    /// A summary line and what it folds: in HTML a closed `<details>`, in Markdown the line
    /// then the blocks.
    Details(String, Vec<Block>),
}

pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    markdown_into(&mut out, blocks);
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn markdown_into(out: &mut String, blocks: &[Block]) {
    for block in blocks {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "{} {text}\n", "#".repeat(*level as usize));
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "{text}\n");
            }
            Block::Table(header, rows) => {
                let _ = writeln!(out, "| {} |", header.join(" | "));
                let align: Vec<&str> = (0..header.len())
                    .map(|i| if i == 0 { "---" } else { "---:" })
                    .collect();
                let _ = writeln!(out, "|{}|", align.join("|"));
                for row in rows {
                    let _ = writeln!(out, "| {} |", row.join(" | "));
                }
                out.push('\n');
            }
            Block::List(ordered, items) => {
                for (i, item) in items.iter().enumerate() {
                    if *ordered {
                        let _ = writeln!(out, "{}. {item}", i + 1);
                    } else {
                        let _ = writeln!(out, "- {item}");
                    }
                }
                out.push('\n');
            }
            Block::Figure(chart) => {
                let _ = writeln!(
                    out,
                    "![{}](charts/{})\n\n*{}*\n",
                    chart.title, chart.file, chart.caption
                );
            }
            Block::Code(text) => {
                let _ = writeln!(out, "```text\n{}```\n", text);
            }
            Block::Details(summary, inner) => {
                let _ = writeln!(out, "{summary}\n");
                markdown_into(out, inner);
            }
        }
    }
}

/// One piece of inline markup.
enum Span<'a> {
    Text(&'a str),
    Code(&'a str),
    /// `**` (opening or closing).
    Bold,
    Link(&'a str, &'a str),
}

/// `text` as spans. A backtick without its closing partner, an unpaired last `**`, and a `[`
/// that does not open a whole `[text](target)` are plain text.
fn spans(text: &str) -> Vec<Span<'_>> {
    // Code spans and links first: what they hold is never markup.
    let mut pieces = Vec::new();
    let (mut i, mut from) = (0, 0);
    while i < text.len() {
        let here = &text[i..];
        let found = if let Some(r) = here.strip_prefix('`') {
            r.find('`').map(|end| (Span::Code(&r[..end]), end + 2))
        } else if here.starts_with('[') {
            link(here)
        } else {
            None
        };
        match found {
            Some((span, len)) => {
                if from < i {
                    pieces.push(Span::Text(&text[from..i]));
                }
                pieces.push(span);
                i += len;
                from = i;
            }
            None => i += here.chars().next().map_or(1, char::len_utf8),
        }
    }
    if from < text.len() {
        pieces.push(Span::Text(&text[from..]));
    }
    // Then the bold markers of the plain pieces, in pairs.
    let markers: usize = pieces
        .iter()
        .map(|p| match p {
            Span::Text(t) => t.matches("**").count(),
            _ => 0,
        })
        .sum();
    let paired = markers - markers % 2;
    let mut seen = 0;
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let Span::Text(mut rest) = piece else {
            out.push(piece);
            continue;
        };
        while seen < paired
            && let Some(at) = rest.find("**")
        {
            if at > 0 {
                out.push(Span::Text(&rest[..at]));
            }
            out.push(Span::Bold);
            seen += 1;
            rest = &rest[at + 2..];
        }
        if !rest.is_empty() {
            out.push(Span::Text(rest));
        }
    }
    out
}

/// `[text](target)` at the start of `s`: the link and its length in bytes.
fn link(s: &str) -> Option<(Span<'_>, usize)> {
    let close = s.find("](")?;
    let text = &s[1..close];
    if text.is_empty() || text.contains(['[', ']', '`']) {
        return None;
    }
    let after = &s[close + 2..];
    let end = after.find(')')?;
    let target = &after[..end];
    if target.is_empty() || target.contains(char::is_whitespace) {
        return None;
    }
    Some((Span::Link(text, target), close + 2 + end + 1))
}

/// Escapes `text` for HTML and turns its `code`, **bold** and link spans into elements.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut bold = false;
    for span in spans(text) {
        match span {
            Span::Text(t) => out.push_str(&escape(t)),
            Span::Code(c) => {
                let _ = write!(out, "<code>{}</code>", escape(c));
            }
            Span::Bold => {
                out.push_str(if bold { "</strong>" } else { "<strong>" });
                bold = !bold;
            }
            Span::Link(t, target) => {
                let _ = write!(out, "<a href=\"{}\">{}</a>", escape(target), escape(t));
            }
        }
    }
    out
}

/// `text` without its inline markup, for the terminal and JSON: `**gcra**` reads `gcra`,
/// `` `[goals]` `` reads `[goals]`, a link reads as its text.
pub fn plain(text: &str) -> String {
    spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(t) | Span::Code(t) | Span::Link(t, _) => t,
            Span::Bold => "",
        })
        .collect()
}

/// The anchor GitHub gives a Markdown heading: lower case, spaces to `-`, anything but
/// letters, digits, `-` and `_` dropped (`Which algorithm` → `which-algorithm`).
pub fn slug(heading: &str) -> String {
    plain(heading)
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// Every heading of `blocks` (those inside a `Details` too), in order, with its slug made
/// unique as GitHub does (a second `Alerts` is `alerts-1`).
fn headings(blocks: &[Block]) -> Vec<(u8, &str, String)> {
    let mut out: Vec<(u8, &str, String)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let flat = blocks.iter().flat_map(|b| match b {
        Block::Details(_, inner) => std::iter::once(b).chain(inner.iter()).collect::<Vec<_>>(),
        _ => vec![b],
    });
    for b in flat {
        if let Block::Heading(level, text) = b {
            let base = slug(text);
            let n = seen.iter().filter(|s| **s == base).count();
            seen.push(base.clone());
            let unique = if n == 0 { base } else { format!("{base}-{n}") };
            out.push((*level, text.as_str(), unique));
        }
    }
    out
}

/// A list linking every heading of `level` in `blocks`: the report's contents.
pub fn contents(blocks: &[Block], level: u8) -> Block {
    let items = headings(blocks)
        .into_iter()
        .filter(|(l, _, _)| *l == level)
        .map(|(_, text, slug)| format!("[{}](#{slug})", plain(text)))
        .collect();
    Block::List(false, items)
}

/// Makes an SVG document embeddable in HTML: no XML declaration and no namespace attribute
/// (HTML knows `<svg>`), so the page holds no URL at all.
fn inline_svg(svg: &str) -> String {
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
        .replace("xmlns=\"http://www.w3.org/2000/svg\" ", "")
        .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
}

/// The page's style: readable at any width; a wide table scrolls inside its own box; charts
/// shrink to the page.
const STYLE: &str = "body{font-family:sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;\
color:#222;line-height:1.45}.table{overflow-x:auto;max-width:100%;margin:1rem 0}\
table{border-collapse:collapse;font-size:.9rem}\
th,td{border:1px solid #ccc;padding:.25rem .5rem}td+td,th+th{text-align:right}\
th{background:#f3f3f3}td{white-space:nowrap}\
code,pre{font-family:monospace;background:#f6f6f6}\
pre{padding:.75rem;overflow-x:auto}figure{margin:1.5rem 0}svg{max-width:100%;height:auto}\
figcaption{font-style:italic;color:#555}.toggles{margin:.25rem 0;font-size:.85rem}\
.toggles button{margin:0 .25rem .25rem 0;border:1px solid #bbb;border-radius:3px;\
background:#fff;cursor:pointer;font:inherit}.toggles button.off{opacity:.45;\
text-decoration:line-through}.series.off{opacity:.12}g.series{cursor:pointer}\
#tip{position:fixed;display:none;pointer-events:none;background:#222;color:#fff;\
padding:.2rem .45rem;border-radius:3px;font-size:.8rem;white-space:pre;z-index:9}\
h1 .anchor,h2 .anchor,h3 .anchor{color:#bbb;text-decoration:none;font-weight:normal;\
visibility:hidden}h1:hover .anchor,h2:hover .anchor,h3:hover .anchor,.anchor:focus{visibility:visible}\
details{margin:.5rem 0}summary{cursor:pointer}\
@media (max-width:40rem){body{margin:1rem auto;padding:0 .5rem}table{font-size:.8rem}}";

/// The page's script, inline (the page loads nothing). For every chart whose SVG marks its
/// series as `<g class="series" data-series="NAME">` (legend entry included), a row of toggle
/// buttons: a button, or a click on the series itself, dims every `[data-series=NAME]` of that
/// chart. Hovering any element with a `<title>` child shows the title at once in a small
/// tooltip. A chart without series groups gets no buttons. Last, it marks the page
/// `data-rlsim="ready"`, which the browser test reads to know the script ran to its end.
const SCRIPT: &str = r#"(function(){
var tip=document.createElement('div');tip.id='tip';document.body.appendChild(tip);
function names(svg){var seen=[];svg.querySelectorAll('[data-series]').forEach(function(g){
var n=g.getAttribute('data-series');if(seen.indexOf(n)<0)seen.push(n);});return seen;}
function toggle(svg,bar,name){var off=false;svg.querySelectorAll('[data-series]').forEach(function(g){
if(g.getAttribute('data-series')===name){g.classList.toggle('off');off=g.classList.contains('off');}});
bar.querySelectorAll('button').forEach(function(b){if(b.dataset.series===name)b.classList.toggle('off',off);});}
document.querySelectorAll('figure svg').forEach(function(svg){var list=names(svg);if(!list.length)return;
var bar=document.createElement('div');bar.className='toggles';bar.setAttribute('role','group');
bar.setAttribute('aria-label','show or hide series');list.forEach(function(n){var b=document.createElement('button');
b.type='button';b.textContent=n;b.dataset.series=n;b.addEventListener('click',function(){toggle(svg,bar,n);});
bar.appendChild(b);});svg.parentNode.insertBefore(bar,svg);
svg.addEventListener('click',function(e){var g=e.target.closest('[data-series]');
if(g&&svg.contains(g))toggle(svg,bar,g.getAttribute('data-series'));});});
function titled(el){while(el&&el.nodeType===1){for(var c=el.firstElementChild;c;c=c.nextElementSibling){
if(c.tagName.toLowerCase()==='title')return c.textContent;}if(el.tagName.toLowerCase()==='svg')return null;
el=el.parentNode;}return null;}
document.addEventListener('mousemove',function(e){var t=e.target&&e.target.closest&&e.target.closest('svg')?titled(e.target):null;
if(!t){tip.style.display='none';return;}tip.textContent=t;tip.style.display='block';
tip.style.left=Math.min(e.clientX+12,window.innerWidth-tip.offsetWidth-4)+'px';tip.style.top=(e.clientY+12)+'px';});
document.documentElement.setAttribute('data-rlsim','ready');
})();"#;

pub fn html(title: &str, blocks: &[Block]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    let mut slugs = headings(blocks).into_iter().map(|(_, _, slug)| slug);
    html_into(&mut out, blocks, &mut slugs);
    let _ = write!(out, "<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
    out
}

/// Renders `blocks`; `slugs` yields each heading's id in document order.
fn html_into(out: &mut String, blocks: &[Block], slugs: &mut dyn Iterator<Item = String>) {
    for block in blocks {
        match block {
            Block::Heading(level, text) => {
                let id = slugs.next().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<h{level} id=\"{id}\">{} <a class=\"anchor\" href=\"#{id}\" \
                     aria-label=\"link to this section\">¶</a></h{level}>",
                    inline(text)
                );
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::Table(header, rows) => html_table(out, header, rows),
            Block::List(ordered, items) => {
                let tag = if *ordered { "ol" } else { "ul" };
                let _ = writeln!(out, "<{tag}>");
                for item in items {
                    let _ = writeln!(out, "<li>{}</li>", inline(item));
                }
                let _ = writeln!(out, "</{tag}>");
            }
            Block::Figure(chart) => {
                let _ = writeln!(
                    out,
                    "<figure id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>",
                    escape(chart.file),
                    inline_svg(chart.svg.trim_end()),
                    inline(&chart.caption)
                );
            }
            Block::Code(text) => {
                let _ = writeln!(out, "<pre>{}</pre>", escape(text.trim_end()));
            }
            Block::Details(summary, inner) => {
                let _ = writeln!(out, "<details>\n<summary>{}</summary>", inline(summary));
                html_into(out, inner, slugs);
                out.push_str("</details>\n");
            }
        }
    }
}

fn html_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    out.push_str("<div class=\"table\">\n<table>\n<thead><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", inline(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", inline(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markup() {
        assert_eq!(
            inline("**gcra**: `a < b` & more"),
            "<strong>gcra</strong>: <code>a &lt; b</code> &amp; more"
        );
        // `**` inside code is code; an unpaired marker or backtick is text.
        assert_eq!(inline("`x**y`"), "<code>x**y</code>");
        assert_eq!(inline("2 ** 3 and `x"), "2 ** 3 and `x");
        assert_eq!(inline("**a** b **"), "<strong>a</strong> b **");
        assert_eq!(
            inline("see [Which algorithm](#which-algorithm), `[goals]` and [x] y"),
            "see <a href=\"#which-algorithm\">Which algorithm</a>, <code>[goals]</code> and [x] y"
        );
    }

    #[test]
    fn plain_text_keeps_the_words_and_drops_the_markup() {
        assert_eq!(
            plain("**by_user** misses `[goals]`: see [the ranking](#which-algorithm)."),
            "by_user misses [goals]: see the ranking."
        );
        assert_eq!(plain("a ** b"), "a ** b");
    }

    #[test]
    fn headings_get_githubs_slugs_made_unique() {
        assert_eq!(slug("Which algorithm"), "which-algorithm");
        assert_eq!(
            slug("Top keys by `refusals` (per IP)"),
            "top-keys-by-refusals-per-ip"
        );
        let blocks = [
            Block::Heading(2, "Alerts".into()),
            Block::Details("more".into(), vec![Block::Heading(3, "Alerts".into())]),
            Block::Heading(2, "Alerts".into()),
        ];
        let ids: Vec<String> = headings(&blocks).into_iter().map(|h| h.2).collect();
        assert_eq!(ids, ["alerts", "alerts-1", "alerts-2"]);
        let page = html("t", &blocks);
        assert!(page.contains(
            "<h3 id=\"alerts-1\">Alerts <a class=\"anchor\" href=\"#alerts-1\" \
             aria-label=\"link to this section\">¶</a></h3>"
        ));
        let Block::List(false, items) = contents(&blocks, 2) else {
            panic!("a list")
        };
        assert_eq!(items, ["[Alerts](#alerts)", "[Alerts](#alerts-2)"]);
    }

    #[test]
    fn both_renderings() {
        let blocks = [
            Block::Heading(2, "Results".into()),
            Block::Table(
                vec!["algorithm".into(), "admitted".into()],
                vec![vec!["gcra".into(), "5".into()]],
            ),
            Block::List(true, vec!["**gcra**: best".into()]),
            Block::Details(
                "2 of 2 pass".into(),
                vec![Block::List(false, vec!["pass `a`".into()])],
            ),
        ];
        let md = markdown(&blocks);
        assert_eq!(
            md,
            "## Results\n\n| algorithm | admitted |\n|---|---:|\n| gcra | 5 |\n\n1. **gcra**: best\n\n\
             2 of 2 pass\n\n- pass `a`\n"
        );
        let page = html("t", &blocks);
        assert!(page.contains("<td>gcra</td><td>5</td>"));
        assert!(page.contains("<ol>\n<li><strong>gcra</strong>: best</li>\n</ol>"));
        assert!(page.contains(
            "<details>\n<summary>2 of 2 pass</summary>\n<ul>\n<li>pass <code>a</code></li>\n</ul>\n</details>"
        ));
    }
}
