//! The normalised view of an item (see the crate docs): its tree with each
//! whitespace run one space, each newline one `\n` and each comment one `#`,
//! which lowering reads, and the map that takes its offsets back to the real
//! text.

use syntax::{GreenNode, NodeOrToken, SyntaxKind, TextRange, TextSize};

use crate::{item_syntax, syntax_kind, Green, ItemKey, ItemKind};

/// Maps an item's normalised offsets back to the real text of the item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PositionMap {
    /// Runs of tokens, each: normalised start, real start, real length. A run
    /// is one trivia token whose normalised text is shorter or longer than its
    /// real one, or as many tokens in a row as keep their length (most of a
    /// line): one entry per run, not per token, as every graph's map is kept.
    tokens: Vec<(u32, u32, u32)>,
    norm_len: u32,
    real_len: u32,
}

impl PositionMap {
    /// Adds the item's next token, by its real and normalised lengths: to
    /// the last run if both keep their length (a run keeps it when its
    /// normalised span, up to the end so far, is its real length).
    fn push(&mut self, real_len: u32, norm_len: u32) {
        let norm_end = self.norm_len;
        match self.tokens.last_mut() {
            Some(run) if real_len == norm_len && run.2 == norm_end - run.0 => run.2 += real_len,
            _ => self.tokens.push((self.norm_len, self.real_len, real_len)),
        }
        self.norm_len += norm_len;
        self.real_len += real_len;
    }

    /// The real offset (relative to the item) of a normalised one.
    pub fn to_real(&self, offset: TextSize) -> TextSize {
        let x = u32::from(offset);
        if x >= self.norm_len {
            return TextSize::from(self.real_len);
        }
        let i = self.tokens.partition_point(|t| t.0 <= x).saturating_sub(1);
        let Some(&(norm, real, len)) = self.tokens.get(i) else {
            return offset;
        };
        TextSize::from(real + (x - norm).min(len))
    }

    /// The normalised offset of a real one (the start of the token it is in,
    /// plus the distance into it, clamped for trivia).
    pub fn to_norm(&self, offset: TextSize) -> TextSize {
        let x = u32::from(offset);
        if x >= self.real_len {
            return TextSize::from(self.norm_len);
        }
        let i = self.tokens.partition_point(|t| t.1 <= x).saturating_sub(1);
        let Some(&(norm, real, _)) = self.tokens.get(i) else {
            return offset;
        };
        let next = self.tokens.get(i + 1).map_or(self.norm_len, |t| t.0);
        TextSize::from((norm + (x - real)).min(next))
    }

    pub fn range_to_real(&self, r: TextRange) -> TextRange {
        TextRange::new(self.to_real(r.start()), self.to_real(r.end()))
    }
}

/// The item's tree with trivia normalised (see the crate docs).
#[salsa::tracked(returns(ref))]
pub fn norm(db: &dyn salsa::Database, key: ItemKey) -> Option<(ItemKind, Green)> {
    let (kind, green) = item_syntax(db, key).as_ref()?;
    Some((*kind, Green(normalise(&green.0))))
}

/// Normalised → real offsets of the item's tokens.
#[salsa::tracked(returns(ref))]
pub fn positions(db: &dyn salsa::Database, key: ItemKey) -> PositionMap {
    let Some((_, green)) = item_syntax(db, key).as_ref() else {
        return PositionMap::default();
    };
    // Through the green tree: a cursor per token cost more than the map.
    let mut map = PositionMap::default();
    syntax::green::walk(&green.0, |visit| {
        if let syntax::green::Visit::Token { kind, range, .. } = visit {
            let real = u32::from(range.len());
            map.push(real, trivia_text(kind).map_or(real, |t| t.len() as u32));
        }
        true
    });
    map.tokens.shrink_to_fit();
    map
}

fn trivia_text(kind: SyntaxKind) -> Option<&'static str> {
    match kind {
        SyntaxKind::WHITESPACE => Some(" "),
        SyntaxKind::NEWLINE => Some("\n"),
        SyntaxKind::COMMENT => Some("#"),
        _ => None,
    }
}

fn normalise(green: &GreenNode) -> GreenNode {
    // Built through a cache, so equal tokens and small nodes are one
    // allocation each, as in the parser's own tree; shared by the items this
    // thread normalises (most share names and punctuation), and started
    // afresh now and then, since it keeps alive whatever it holds.
    const ITEMS_PER_CACHE: u32 = 1024;
    thread_local! {
        static CACHE: std::cell::RefCell<(rowan::NodeCache, u32)> = Default::default();
    }
    CACHE.with_borrow_mut(|(cache, items)| {
        *items += 1;
        if *items > ITEMS_PER_CACHE {
            *cache = rowan::NodeCache::default();
            *items = 1;
        }
        normalise_with(cache, green)
    })
}

fn normalise_with(cache: &mut rowan::NodeCache, green: &GreenNode) -> GreenNode {
    let mut builder = rowan::GreenNodeBuilder::with_cache(cache);
    fn build(builder: &mut rowan::GreenNodeBuilder, node: &rowan::GreenNodeData) {
        builder.start_node(node.kind());
        for child in node.children() {
            match child {
                NodeOrToken::Node(n) => build(builder, n),
                NodeOrToken::Token(t) => {
                    let text = trivia_text(syntax_kind(t.kind())).unwrap_or(t.text());
                    builder.token(t.kind(), text);
                }
            }
        }
        builder.finish_node();
    }
    build(&mut builder, green);
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map with an entry per token, as it was before runs were merged.
    fn per_token(tokens: &[(u32, u32)]) -> PositionMap {
        let mut map = PositionMap::default();
        for &(real_len, norm_len) in tokens {
            map.tokens.push((map.norm_len, map.real_len, real_len));
            map.norm_len += norm_len;
            map.real_len += real_len;
        }
        map
    }

    /// Merged runs map every offset, both ways, as an entry per token does.
    #[test]
    fn runs_map_offsets_as_tokens_do() {
        // (real length, normalised length): names and punctuation keep
        // theirs, indentation and comments shrink, an empty token, a
        // newline.
        let mut seed = 7u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let tokens: Vec<(u32, u32)> = (0..next() % 40)
                .map(|_| match next() % 5 {
                    0 => (1 + (next() % 6) as u32, 1),
                    1 => (0, 0),
                    2 => (1, 1),
                    _ => {
                        let n = 1 + (next() % 5) as u32;
                        (n, n)
                    }
                })
                .collect();
            let mut runs = PositionMap::default();
            for &(real, norm) in &tokens {
                runs.push(real, norm);
            }
            let reference = per_token(&tokens);
            assert!(runs.tokens.len() <= reference.tokens.len());
            assert_eq!(
                (runs.norm_len, runs.real_len),
                (reference.norm_len, reference.real_len)
            );
            for x in 0..=reference.real_len + 1 {
                let x = TextSize::from(x);
                assert_eq!(
                    runs.to_norm(x),
                    reference.to_norm(x),
                    "{tokens:?} real {x:?}"
                );
                assert_eq!(
                    runs.to_real(x),
                    reference.to_real(x),
                    "{tokens:?} norm {x:?}"
                );
            }
        }
    }
}
