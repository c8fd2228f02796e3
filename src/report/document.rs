//! A small document model rendered as Markdown and as self-contained HTML, so `report.md` and
//! `report.html` cannot say different things.
//!
//! Inline markup is the Markdown subset both can carry: `` `code` `` and `**bold**`.

use super::charts::{Chart, escape};
use std::fmt::Write;

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
}

pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
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
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Escapes `text` for HTML and turns its `code` and **bold** spans into elements.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let (mut code, mut bold) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !code && rest.starts_with("**") {
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
            rest = &rest[2..];
        } else if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = &rest[1..];
        } else {
            out.push_str(&escape(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
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
const STYLE: &str = "body{font-family:sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;\
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
    for block in blocks {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "<h{level}>{}</h{level}>", inline(text));
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::Table(header, rows) => {
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
                    escape(&chart.caption)
                );
            }
            Block::Code(text) => {
                let _ = writeln!(out, "<pre>{}</pre>", escape(text.trim_end()));
            }
        }
    }
    let _ = write!(out, "<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
    out
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
        // `**` inside code is code.
        assert_eq!(inline("`x**y`"), "<code>x**y</code>");
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
        ];
        let md = markdown(&blocks);
        assert_eq!(
            md,
            "## Results\n\n| algorithm | admitted |\n|---|---:|\n| gcra | 5 |\n\n1. **gcra**: best\n"
        );
        let page = html("t", &blocks);
        assert!(page.contains("<td>gcra</td><td>5</td>"));
        assert!(page.contains("<ol>\n<li><strong>gcra</strong>: best</li>\n</ol>"));
    }
}
