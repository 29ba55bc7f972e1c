//! MindSpore's scopes in an imported model: the importer keeps each node's
//! scope as the prefix of its name (`block.act.div` for
//! `Default/block-Block/act-GELU/Div-op0`; a cell of a `SequentialCell` is
//! numbered, `conv1._0.conv2d` for `Default/conv1-SequentialCell/0-Conv2d/...`).

/// The MindSpore scope of a name, written as MindSpore names the cells
/// (`block.act`, `conv1.0`); `None` for a name without one.
pub fn of(name: &str) -> Option<String> {
    let (scope, _) = name.rsplit_once('.')?;
    let parts: Vec<&str> = scope.split('.').collect();
    if parts.iter().any(|p| !is_segment(p)) {
        return None;
    }
    let cells: Vec<&str> = parts
        .iter()
        .map(|p| match p.strip_prefix('_') {
            Some(d) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => d,
            _ => p,
        })
        .collect();
    Some(cells.join("."))
}

fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The names in `names` that lie in the scope `prefix` (`block.fc` holds
/// `block.fc.x` and `block.fc.weight`).
pub fn members<'a, T>(prefix: &str, names: &'a [(String, T)]) -> Vec<&'a (String, T)> {
    if !prefix.split('.').all(is_segment) {
        return Vec::new();
    }
    let mut out: Vec<&(String, T)> = Vec::new();
    for b in names {
        let inside =
            b.0.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('.'));
        if inside && !out.iter().any(|o| o.0 == b.0) {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        assert_eq!(of("gelu.div").as_deref(), Some("gelu"));
        assert_eq!(of("block.act.div").as_deref(), Some("block.act"));
        assert_eq!(of("conv1._0.conv2d").as_deref(), Some("conv1.0"));
        assert_eq!(of("x"), None);
        assert_eq!(of("%0"), None);
        let names = vec![
            ("block.fc.x".to_string(), 1),
            ("block.fcx".to_string(), 2),
            ("block.fc.weight".to_string(), 3),
        ];
        let m = members("block.fc", &names);
        assert_eq!(m.len(), 2);
        assert!(members("block.f", &names).is_empty());
    }
}
