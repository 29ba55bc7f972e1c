//! The lexer: `logos` turns text into a flat list of tokens; every byte of the
//! input lands in exactly one token, so trees are lossless.

use logos::Logos;

use crate::{SyntaxError, SyntaxKind, TextRange, TextSize};

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
enum RawToken {
    #[regex(r"[ \t\u{feff}]+")]
    Whitespace,
    // A line break is `\n`, `\r\n` or a lone `\r` (as in LSP 3.17).
    #[regex(r"\r\n|\r|\n")]
    Newline,
    // A comment runs to the end of the line.
    #[regex(r"#[^\r\n]*", allow_greedy = true)]
    Comment,
    // Keywords are recognised from the identifier's text (see `SyntaxKind::from_keyword`),
    // so `graph.x` stays one dotted name.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")]
    Ident,
    #[regex(r"%[A-Za-z0-9_]+")]
    Temp,
    #[regex(r"[0-9]+")]
    Int,
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+")]
    Float,
    #[regex(r#""([^"\\\r\n]|\\[^\r\n])*""#)]
    String,
    #[regex(r#""([^"\\\r\n]|\\[^\r\n])*\\?"#)]
    UnterminatedString,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("=")]
    Eq,
    #[token("==")]
    Eq2,
    #[token("!=")]
    Neq,
    #[token("<")]
    Lt,
    #[token("<=")]
    LtEq,
    #[token(">")]
    Gt,
    #[token(">=")]
    GtEq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("@")]
    At,
    #[token("->")]
    ThinArrow,
    #[token("=>")]
    FatArrow,
    #[token("?")]
    Question,
}

/// One lexed token: its kind and where it starts. Its end is the next token's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub len: TextSize,
}

/// Splits `text` into tokens, reporting malformed ones as errors.
pub fn tokenize(text: &str) -> (Vec<Token>, Vec<SyntaxError>) {
    let mut tokens = Vec::with_capacity(text.len() / 3);
    let mut errors = Vec::new();
    let mut lexer = RawToken::lexer(text);
    while let Some(raw) = lexer.next() {
        let span = lexer.span();
        let range = TextRange::new((span.start as u32).into(), (span.end as u32).into());
        let kind = match raw {
            Ok(raw) => match raw {
                RawToken::Whitespace => SyntaxKind::WHITESPACE,
                RawToken::Newline => SyntaxKind::NEWLINE,
                RawToken::Comment => SyntaxKind::COMMENT,
                RawToken::Ident => {
                    SyntaxKind::from_keyword(lexer.slice()).unwrap_or(SyntaxKind::IDENT)
                }
                RawToken::Temp => SyntaxKind::TEMP,
                RawToken::Int => SyntaxKind::INT,
                RawToken::Float => SyntaxKind::FLOAT,
                RawToken::String => {
                    check_escapes(lexer.slice(), range.start(), &mut errors);
                    SyntaxKind::STRING
                }
                RawToken::UnterminatedString => {
                    errors.push(SyntaxError::new(
                        "unterminated string: missing closing `\"` before the end of the line",
                        range,
                    ));
                    SyntaxKind::STRING
                }
                RawToken::LParen => SyntaxKind::L_PAREN,
                RawToken::RParen => SyntaxKind::R_PAREN,
                RawToken::LBrack => SyntaxKind::L_BRACK,
                RawToken::RBrack => SyntaxKind::R_BRACK,
                RawToken::LBrace => SyntaxKind::L_BRACE,
                RawToken::RBrace => SyntaxKind::R_BRACE,
                RawToken::Comma => SyntaxKind::COMMA,
                RawToken::Semi => SyntaxKind::SEMI,
                RawToken::Colon => SyntaxKind::COLON,
                RawToken::Eq => SyntaxKind::EQ,
                RawToken::Eq2 => SyntaxKind::EQ2,
                RawToken::Neq => SyntaxKind::NEQ,
                RawToken::Lt => SyntaxKind::LT,
                RawToken::LtEq => SyntaxKind::LTEQ,
                RawToken::Gt => SyntaxKind::GT,
                RawToken::GtEq => SyntaxKind::GTEQ,
                RawToken::Plus => SyntaxKind::PLUS,
                RawToken::Minus => SyntaxKind::MINUS,
                RawToken::Star => SyntaxKind::STAR,
                RawToken::Slash => SyntaxKind::SLASH,
                RawToken::At => SyntaxKind::AT,
                RawToken::ThinArrow => SyntaxKind::THIN_ARROW,
                RawToken::FatArrow => SyntaxKind::FAT_ARROW,
                RawToken::Question => SyntaxKind::QUESTION,
            },
            Err(()) => {
                let message = match lexer.slice().chars().next() {
                    Some('.') => {
                        "unexpected `.`: a dotted name's segments must start with a letter or `_`"
                            .to_string()
                    }
                    Some('%') => {
                        "a temporary is `%` followed by letters, digits or `_` (`%1`, `%t`)"
                            .to_string()
                    }
                    Some(c) => format!("unexpected character `{}`", c.escape_debug()),
                    None => "unexpected input".to_string(),
                };
                errors.push(SyntaxError::new(message, range));
                SyntaxKind::ERROR_TOKEN
            }
        };
        // Merge runs of bad characters into one error token (and one error).
        if kind == SyntaxKind::ERROR_TOKEN {
            if let Some(last) = tokens.last_mut().filter(|t: &&mut Token| t.kind == kind) {
                last.len += range.len();
                errors.pop();
                if let Some(first) = errors.last_mut() {
                    first.range = first.range.cover(range);
                }
                continue;
            }
        }
        tokens.push(Token {
            kind,
            len: range.len(),
        });
    }
    (tokens, errors)
}

fn check_escapes(literal: &str, start: TextSize, errors: &mut Vec<SyntaxError>) {
    let mut chars = literal.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            continue;
        }
        if let Some((j, e)) = chars.next() {
            if !matches!(e, '"' | '\\' | 'n' | 't') {
                let from = start + TextSize::from(i as u32);
                let to = start + TextSize::from((j + e.len_utf8()) as u32);
                errors.push(SyntaxError::new(
                    format!(
                        "unknown escape `\\{}`: a string allows `\\\"`, `\\\\`, `\\n` and `\\t`",
                        e.escape_debug()
                    ),
                    TextRange::new(from, to),
                ));
            }
        }
    }
}

/// The decoded value of a string literal token (quotes removed, escapes applied).
pub fn unescape_string(literal: &str) -> String {
    let inner = literal.strip_prefix('"').unwrap_or(literal);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}
