//! A string that matches a `pattern`, for the common shapes of schema patterns: literals,
//! classes (`[a-z0-9_-]`, `\d`, `\w`, `\s`, `.`), groups with alternation, the quantifiers
//! `? * + {n} {n,} {n,m}` and anchors. Anything else (look-around, back-references) is
//! refused with a reason; every example is checked with the `regex` crate, as the
//! validator checks it, before it is returned.

use regex::Regex;

/// The most repetitions of one part of a pattern the generator builds.
const MAX_REPEAT: usize = 10_000;

#[derive(Debug)]
enum Node {
    Literal(char),
    /// Ranges of a class; `negated` picks a character outside them.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
    /// Alternatives, each a sequence.
    Group(Vec<Vec<Node>>),
    Repeat {
        node: Box<Node>,
        min: usize,
        max: Option<usize>,
    },
    /// `^`, `$`, `\b`: match no character.
    Anchor,
}

/// A string of `min..=max` characters that `pattern` matches; `choice` varies the
/// alternatives and repetitions.
pub(crate) fn example(
    pattern: &str,
    choice: usize,
    min: usize,
    max: Option<usize>,
) -> Result<String, String> {
    let regex =
        Regex::new(pattern).map_err(|e| format!("pattern {pattern:?} does not compile: {e}"))?;
    let tree = Parser {
        chars: pattern.chars().collect(),
        at: 0,
    }
    .parse()
    .map_err(|why| format!("pattern {pattern:?}: {why}"))?;
    // Stretch repetitions until the length fits.
    for stretch in [1, 0, 2, 4, 8, 16, 32, 64] {
        let mut out = String::new();
        emit_all(&tree, choice, stretch, &mut out);
        let len = out.chars().count();
        if len >= min && max.is_none_or(|m| len <= m) && regex.is_match(&out) {
            return Ok(out);
        }
    }
    Err(format!(
        "no example of pattern {pattern:?} with {min} to {max:?} characters"
    ))
}

fn emit_all(alternatives: &[Vec<Node>], choice: usize, stretch: usize, out: &mut String) {
    if alternatives.is_empty() {
        return;
    }
    for node in &alternatives[choice % alternatives.len()] {
        emit(node, choice, stretch, out);
    }
}

fn emit(node: &Node, choice: usize, stretch: usize, out: &mut String) {
    match node {
        Node::Literal(c) => out.push(*c),
        Node::Class { ranges, negated } => out.push(class_char(ranges, *negated, choice)),
        Node::Group(alternatives) => emit_all(alternatives, choice, stretch, out),
        Node::Repeat { node, min, max } => {
            let mut count = (*min).max(stretch);
            if let Some(max) = max {
                count = count.min(*max);
            }
            for i in 0..count {
                emit(node, choice + i, stretch, out);
            }
        }
        Node::Anchor => {}
    }
}

fn class_char(ranges: &[(char, char)], negated: bool, choice: usize) -> char {
    let inside = |c: char| ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c));
    if negated {
        return ['a', 'Z', '0', '_', '-', ' ', '~', 'é']
            .into_iter()
            .find(|c| !inside(*c))
            .unwrap_or('\u{2603}');
    }
    match ranges.get(choice % ranges.len().max(1)) {
        Some((lo, _)) => *lo,
        None => 'a',
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn parse(mut self) -> Result<Vec<Vec<Node>>, String> {
        let tree = self.alternatives()?;
        if self.at < self.chars.len() {
            return Err(format!("unexpected `{}`", self.chars[self.at]));
        }
        Ok(tree)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }

    fn alternatives(&mut self) -> Result<Vec<Vec<Node>>, String> {
        let mut out = vec![Vec::new()];
        while let Some(c) = self.peek() {
            match c {
                '|' => {
                    self.at += 1;
                    out.push(Vec::new());
                }
                ')' => break,
                _ => {
                    let atom = self.atom()?;
                    let node = self.quantified(atom)?;
                    if let Some(last) = out.last_mut() {
                        last.push(node);
                    }
                }
            }
        }
        Ok(out)
    }

    fn atom(&mut self) -> Result<Node, String> {
        match self.next() {
            Some('(') => {
                if self.peek() == Some('?') {
                    self.at += 1;
                    match self.next() {
                        Some(':') => {}
                        Some('<') if !matches!(self.peek(), Some('=' | '!')) => {
                            while let Some(c) = self.next() {
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        Some('P') if self.peek() == Some('<') => {
                            while let Some(c) = self.next() {
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        _ => return Err("look-around is not supported".to_owned()),
                    }
                }
                let inner = self.alternatives()?;
                if self.next() != Some(')') {
                    return Err("unclosed group".to_owned());
                }
                Ok(Node::Group(inner))
            }
            Some('[') => self.class(),
            Some('.') => Ok(Node::Class {
                ranges: vec![('a', 'z')],
                negated: false,
            }),
            Some('^' | '$') => Ok(Node::Anchor),
            Some('\\') => self.escape(),
            Some(c @ ('*' | '+' | '?' | '{')) => Err(format!("nothing to repeat before `{c}`")),
            Some(c) => Ok(Node::Literal(c)),
            None => Err("unexpected end".to_owned()),
        }
    }

    fn escape(&mut self) -> Result<Node, String> {
        let class = |ranges: Vec<(char, char)>, negated| Ok(Node::Class { ranges, negated });
        match self.next() {
            Some('d') => class(vec![('0', '9')], false),
            Some('D') => class(vec![('0', '9')], true),
            Some('w') => class(vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')], false),
            Some('W') => class(vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')], true),
            Some('s') => class(vec![(' ', ' ')], false),
            Some('S') => class(vec![(' ', ' '), ('\t', '\r')], true),
            Some('b' | 'B' | 'A' | 'z' | 'Z') => Ok(Node::Anchor),
            Some(c) if c.is_ascii_digit() => Err("back-references are not supported".to_owned()),
            Some(c) => Ok(Node::Literal(self.escaped_char(c)?)),
            None => Err("a pattern cannot end with `\\`".to_owned()),
        }
    }

    /// The character an escape other than a class stands for (`\n`, `\x41`, `\.`).
    fn escaped_char(&mut self, c: char) -> Result<char, String> {
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'f' => '\u{c}',
            'v' => '\u{b}',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            other => other,
        })
    }

    fn hex(&mut self, digits: usize) -> Result<char, String> {
        let text: String = (0..digits).filter_map(|_| self.next()).collect();
        u32::from_str_radix(&text, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| format!("bad hex escape `{text}`"))
    }

    fn class(&mut self) -> Result<Node, String> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let c = self.next().ok_or("unclosed class")?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                match self.next().ok_or("unclosed class")? {
                    'd' => {
                        ranges.push(('0', '9'));
                        continue;
                    }
                    'w' => {
                        ranges.extend([('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')]);
                        continue;
                    }
                    's' => {
                        ranges.push((' ', ' '));
                        continue;
                    }
                    other => self.escaped_char(other)?,
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|c| *c != ']') {
                self.at += 1;
                let hi = match self.next().ok_or("unclosed class")? {
                    '\\' => {
                        let e = self.next().ok_or("unclosed class")?;
                        self.escaped_char(e)?
                    }
                    c => c,
                };
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Node::Class { ranges, negated })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let start = self.at;
                self.at += 1;
                let mut text = String::new();
                while let Some(c) = self.next() {
                    if c == '}' {
                        break;
                    }
                    text.push(c);
                }
                let parse = |s: &str| s.trim().parse::<usize>().ok();
                let bounds = match text.split_once(',') {
                    None => parse(&text).map(|n| (n, Some(n))),
                    Some((lo, "")) => parse(lo).map(|n| (n, None)),
                    Some((lo, hi)) => parse(lo).zip(parse(hi)).map(|(a, b)| (a, Some(b))),
                };
                match bounds {
                    Some(bounds) => {
                        self.at -= 1; // the `}` is consumed below
                        bounds
                    }
                    None => {
                        // Not a quantifier: a literal `{`.
                        self.at = start;
                        return Ok(atom);
                    }
                }
            }
            _ => return Ok(atom),
        };
        self.at += 1;
        if matches!(self.peek(), Some('?' | '+')) {
            self.at += 1; // lazy or possessive: the same strings match
        }
        if min > MAX_REPEAT {
            return Err(format!(
                "a repetition of at least {min} is more than the generator builds"
            ));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::example;

    #[test]
    fn common_patterns_get_matching_examples() {
        for pattern in [
            r"^[a-z]+$",
            r"^\d{3}-\d{4}$",
            r"^[A-Z]{2,3}(-[0-9]+)?$",
            r"^(red|green|blue)$",
            r"^[^\s@]+@[^\s@]+\.[a-z]{2,}$",
            r"^v\d+\.\d+\.\d+$",
            r"abc",
            r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$",
        ] {
            for choice in 0..3 {
                let s = example(pattern, choice, 0, None).unwrap();
                assert!(
                    regex::Regex::new(pattern).unwrap().is_match(&s),
                    "{pattern}: {s:?}"
                );
            }
        }
    }

    #[test]
    fn lengths_are_respected_and_unsupported_patterns_say_why() {
        let s = example(r"^[a-z]+$", 0, 5, Some(8)).unwrap();
        assert!((5..=8).contains(&s.len()), "{s}");
        assert!(example(r"^(?=a)a$", 0, 0, None).is_err());
        assert!(
            example(r"^a{20000}$", 0, 0, None)
                .unwrap_err()
                .contains("repetition")
        );
    }
}
