//! Reading a dump's text: its lines, parameters, types, nodes and constants.

use super::*;

/// Parses a dump into the importers' graph model.
pub(super) fn parse(text: &str) -> Result<(Module, NodeTypes, Lines, Vec<String>), ImportError> {
    let lines = logical_lines(text);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut entry: Option<String> = None;
    let mut header_params: Vec<(usize, String, Option<Ty>, bool)> = Vec::new();
    let mut graphs: Vec<PGraph> = Vec::new();
    let mut pending_types: Option<Vec<Option<Ty>>> = None;
    let mut pending_monads: Option<Vec<bool>> = None;
    let mut pending_weights: Option<Vec<bool>> = None;
    let mut header_monads: Vec<usize> = Vec::new();
    let mut header_funcs: Vec<usize> = Vec::new();
    let mut i = 0;
    let mut in_params = false;
    // A graph with a custom backward rule (a Cell's `bprop`), which MindSpore
    // keeps outside its dumps (its `subgraph attr:` line), and a `J` that
    // still differentiates.
    let custom_bprop = lines.iter().position(|l| l.trim() == "primal_of_bprop: 1");
    let differentiates = lines.iter().position(|l| l.contains(" = J("));
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("# IR entry: @") {
            entry = Some(rest.trim().to_string());
        } else if line.starts_with("# Params:") {
            in_params = true;
        } else if in_params && line.starts_with("%para") {
            let (num, name, ty) = parse_param_decl(line).ok_or_else(|| err(i, "bad parameter"))?;
            let weight = line.contains("has_default") || line.contains("IsWeight: true");
            if line.contains(": <UMonad,") || line.contains(": <IOMonad,") {
                header_monads.push(num);
            }
            if line.contains(": <Func,") {
                header_funcs.push(num);
            }
            header_params.push((num, name, ty, weight));
        } else if let Some(rest) = line.strip_prefix("# Parameters: ") {
            in_params = false;
            pending_types = Some(parse_param_types(rest));
            pending_monads = Some(parse_param_monads(rest));
            pending_weights = Some(parse_param_weights(rest));
        } else if let Some(rest) = line.strip_prefix("subgraph @") {
            in_params = false;
            let mut g = parse_graph_header(rest).ok_or_else(|| err(i, "bad subgraph header"))?;
            g.header_line = i;
            if let Some(types) = pending_types.take() {
                if types.len() == g.params.len() {
                    for (p, t) in g.params.iter_mut().zip(types) {
                        p.2 = t;
                    }
                }
            }
            if let Some(monads) = pending_monads.take() {
                if monads.len() == g.params.len() {
                    g.monads = monads;
                }
            }
            if let Some(weights) = pending_weights.take() {
                if weights.len() == g.params.len() {
                    g.weights = weights;
                }
            }
            i += 1;
            // Whether the last statement read was a node (its comments follow it).
            let mut after_node = false;
            while i < lines.len() && !lines[i].starts_with('}') {
                let l = lines[i];
                // The front end's and the execute graph's `# Fullname with scope:
                // (Default/.../Conv2D-op12)`; the kernel graphs' `# Scope:
                // (Default/...)`, the cells alone.
                let comment = l.trim_start();
                let scope = match comment.strip_prefix("# Fullname with scope: (") {
                    Some(full) => Some(full.trim_end().strip_suffix(')').map(str::to_string)),
                    None => comment.strip_prefix("# Scope: (").map(|cells| {
                        cells
                            .trim_end()
                            .strip_suffix(')')
                            .map(|c| format!("{c}/call"))
                    }),
                };
                if let Some(scope) = scope {
                    if let (true, Some(node @ PNode { scope: None, .. })) =
                        (after_node, g.nodes.last_mut())
                    {
                        node.scope = scope;
                    }
                    i += 1;
                    continue;
                }
                if let Some(sig) = l.trim_start().strip_prefix(": ") {
                    // The previous node's input and output types.
                    // (Kernel graphs print more lines after it: device formats.)
                    if let (Some(node @ PNode { ty: None, .. }), Some((_, out))) =
                        (g.nodes.last_mut(), sig.rsplit_once(") -> ("))
                    {
                        let out = out.trim_end().strip_suffix(')').unwrap_or(out);
                        node.ty = out
                            .trim()
                            .strip_prefix('<')
                            .and_then(|o| o.strip_suffix('>'))
                            .and_then(parse_abstract)
                            // Dumped, but not a type the DSL writes (`Object:SymbolicKey`).
                            .or(Some(Ty::Unknown));
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("      ") || l.trim().is_empty() || l.trim_start().starts_with('#')
                {
                    i += 1;
                    continue;
                }
                let body = l.trim();
                after_node = false;
                if let Some(rest) = body.strip_prefix("Return(") {
                    let mut p = Parser::new(rest);
                    let r = p.arg().map_err(|e| err(i, e))?;
                    g.output = Some(r);
                    g.return_line = i;
                } else if body.starts_with('%') {
                    let mut node = parse_cnode(body).map_err(|e| err(i, e))?;
                    node.line = i;
                    g.nodes.push(node);
                    after_node = true;
                } else {
                    return Err(err(i, format!("unexpected line `{body}`")));
                }
                i += 1;
            }
            graphs.push(g);
        } else if !line.starts_with('%') && !line.trim().is_empty() {
            in_params = in_params && line.starts_with('#');
        }
        i += 1;
    }
    if let (Some(attr), Some(j)) = (custom_bprop, differentiates) {
        // Importing would differentiate the graph by its primitives: a wrong
        // gradient, silently.
        return Err(ImportError::Unsupported(format!(
            "line {}: a graph of this dump has a custom backward rule (`primal_of_bprop: 1`: a Cell's \
             `bprop`), which MindSpore keeps outside its dumps, and line {} still differentiates it \
             (`J`); mirdsl would use the primitives' own derivatives instead. Import a stage from \
             `opt_a` on, where MindSpore has applied the rule",
            attr + 1,
            j + 1
        )));
    }
    let entry = entry.ok_or_else(|| {
        // MindSpore's runtime writes its actor sets (`*actor_set*.ir`) beside
        // the graphs: a schedule of kernels, not a FuncGraph.
        if lines.iter().any(|l| {
            l.contains("Actor(")
                || l.contains("# AID :")
                || l.starts_with("[Device tensor stores]")
                || l.starts_with("[continuous memory nodes")
        }) {
            ImportError::Malformed(
                "a runtime actor set (the kernels' schedule MindSpore's runtime writes), not a \
                 graph: import a stage's graph dump instead"
                    .into(),
            )
        } else {
            ImportError::Malformed("no `# IR entry:` line".into())
        }
    })?;
    build(entry, header_params, &header_monads, &header_funcs, graphs)
}

/// The dump's lines, a statement that MindSpore printed over several lines
/// (a tensor constant's value is printed as NumPy prints it, one row a line)
/// joined into one: a line that leaves a bracket open continues on the next.
/// Comment lines are never joined. The count of lines stays the file's: a
/// joined line is followed by empty ones, so errors name the real line.
pub(super) fn logical_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<(usize, i64)> = None;
    for line in text.lines() {
        if let Some((at, depth)) = open {
            out[at].push(' ');
            out[at].push_str(line.trim());
            out.push(String::new());
            let depth = depth + bracket_balance(line);
            open = (depth > 0).then_some((at, depth));
            continue;
        }
        let trimmed = line.trim_start();
        let depth = if trimmed.starts_with('#') || trimmed.is_empty() {
            0
        } else {
            bracket_balance(line)
        };
        out.push(line.to_string());
        if depth > 0 && (trimmed.starts_with('%') || trimmed.starts_with("Return(")) {
            open = Some((out.len() - 1, depth));
        }
    }
    out
}

/// Opened minus closed `(` and `[` outside strings.
pub(super) fn bracket_balance(line: &str) -> i64 {
    let mut depth = 0;
    let mut in_str = false;
    for c in line.chars() {
        match c {
            '"' => in_str = !in_str,
            '(' | '[' if !in_str => depth += 1,
            ')' | ']' if !in_str => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `%para1_x: <Tensor[Float32], (3)> : [3] ...`
pub(super) fn parse_param_decl(line: &str) -> Option<(usize, String, Option<Ty>)> {
    let (head, rest) = line.split_once(": ")?;
    let (num, name) = split_para(head.trim())?;
    let ty = rest
        .trim()
        .strip_prefix('<')
        .and_then(|r| {
            let end = matching(r, '<', '>')?;
            Some(&r[..end])
        })
        .and_then(parse_abstract);
    Some((num, name, ty))
}

/// `%para12_x` or `para12_x`: the number and the name.
pub(super) fn split_para(s: &str) -> Option<(usize, String)> {
    let s = s.trim_start_matches('%').strip_prefix("para")?;
    let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
    let num = s[..digits].parse().ok()?;
    let name = s[digits..].strip_prefix('_').unwrap_or(&s[digits..]);
    Some((num, name.to_string()))
}

/// The index of the bracket closing the one before `s` (depth counted).
pub(super) fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `2, (<Tensor[Float32], (3)>, <Int64, NoShape>)`
pub(super) fn parse_param_types(s: &str) -> Vec<Option<Ty>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = matching(after, '<', '>') else {
            break;
        };
        out.push(parse_abstract(&after[..end]));
        rest = &after[end + 1..];
    }
    out
}

/// Which of `# Parameters:`'s types are the state token (`<UMonad, NoShape>`,
/// `<IOMonad, NoShape>`).
pub(super) fn parse_param_monads(s: &str) -> Vec<bool> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = matching(after, '<', '>') else {
            break;
        };
        let t = after[..end].trim_start();
        out.push(t.starts_with("UMonad,") || t.starts_with("IOMonad,"));
        rest = &after[end + 1..];
    }
    out
}

/// Which of `# Parameters:`'s types are a weight (`<Ref[Tensor[Float32]], (4, 4),
/// ref_key=inner.dense.weight, is_parameter>`).
pub(super) fn parse_param_weights(s: &str) -> Vec<bool> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = matching(after, '<', '>') else {
            break;
        };
        out.push(after[..end].trim_end().ends_with("is_parameter"));
        rest = &after[end + 1..];
    }
    out
}

/// The inside of `<Tensor[Float32], (3)>`, `<Int64, NoShape>`, `<Tuple[...], TupleShape(...)>`.
pub(super) fn parse_abstract(s: &str) -> Option<Ty> {
    let (ty, shape) = split_top(s, ',')
        .into_iter()
        .fold((None, None), |acc, part| match acc {
            (None, _) => (Some(part), None),
            (t, None) => (t, Some(part)),
            done => done,
        });
    let ty = ty?.trim();
    let shape = shape.unwrap_or("").trim();
    let mut budget = MAX_TYPE_ELEMENTS;
    type_with_shape(ty, shape, &mut budget)
}

/// The most elements one type may expand to (`Tuple[Tensor[Float32]*N]`,
/// nested: the counts multiply): far above any real model's (a tuple of
/// optimizer states holds one per parameter), far below what would exhaust
/// memory on a hostile dump. Past it the type is not known.
pub(super) const MAX_TYPE_ELEMENTS: usize = 1 << 16;

pub(super) fn type_with_shape(ty: &str, shape: &str, budget: &mut usize) -> Option<Ty> {
    // A parameter (`Ref[Tensor[Float32]], (8), ref_key=...`) has its value's type.
    if let Some(inner) = ty.strip_prefix("Ref[").and_then(|t| t.strip_suffix(']')) {
        return type_with_shape(inner, shape, budget);
    }
    if let Some(inner) = ty.strip_prefix("Tensor[").and_then(|t| t.strip_suffix(']')) {
        let d = ms_dtype(inner)?;
        return Some(Ty::Tensor(d, parse_shape(shape)?));
    }
    if let Some(inner) = ty.strip_prefix("Tuple[").and_then(|t| t.strip_suffix(']')) {
        let elems = expand_repeats(&split_top(inner, ','), budget)?;
        let shapes: Vec<&str> = match shape
            .strip_prefix("TupleShape(")
            .and_then(|s| s.strip_suffix(')'))
        {
            Some(inner) => split_top(inner, ','),
            None => vec!["NoShape"; elems.len()],
        };
        // The shapes stand beside the elements already counted.
        let shapes = expand_repeats(&shapes, &mut elems.len())?;
        if shapes.len() != elems.len() {
            return None;
        }
        return elems
            .iter()
            .zip(&shapes)
            .map(|(t, s)| type_with_shape(t.trim(), s.trim(), budget))
            .collect::<Option<Vec<_>>>()
            .map(Ty::Tuple);
    }
    match ty {
        "None" => Some(Ty::None),
        "String" => Some(Ty::Str),
        _ => ms_dtype(ty).map(Ty::Scalar),
    }
}

/// `Tensor[Float32]*2` is two elements; `None` past `budget` elements (what
/// is left of it is taken).
pub(super) fn expand_repeats<'a>(items: &[&'a str], budget: &mut usize) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    for &item in items {
        let (text, count) = match item.rsplit_once('*') {
            Some((t, n)) => match n.trim().parse::<usize>() {
                Ok(n) => (t, n),
                Err(_) => (item, 1),
            },
            None => (item, 1),
        };
        *budget = budget.checked_sub(count)?;
        // Borrowed: a long element type repeated is not copied.
        out.extend(std::iter::repeat_n(text.trim(), count));
    }
    Some(out)
}

/// `(3)`, `(2, 3)`, `()`, `(-1, 4)`, `(-2)`.
pub(super) fn parse_shape(s: &str) -> Option<Shape> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    if inner.trim() == "-2" {
        return Some(Shape::Unranked);
    }
    let dims = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| match d.parse::<i64>() {
            Ok(n) if n >= 0 => Some(Dim::Known(n)),
            Ok(_) => Some(Dim::Unknown),
            Err(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Shape::Ranked(dims))
}

/// Splits at `sep` outside brackets.
pub(super) fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if start < s.len() || !out.is_empty() {
        out.push(&s[start..]);
    }
    out.into_iter().filter(|x| !x.trim().is_empty()).collect()
}

pub(super) fn ms_dtype(name: &str) -> Option<DType> {
    DType::ALL
        .into_iter()
        .find(|d| d.mindspore_name() == name)
        .or(match name {
            "Float" => Some(DType::F32),
            "Int" => Some(DType::I64),
            // A dtype as a kernel graph's attribute (`dst_type: F32`).
            "F16" => Some(DType::F16),
            "BF16" => Some(DType::BF16),
            "F32" => Some(DType::F32),
            "F64" => Some(DType::F64),
            "I8" => Some(DType::I8),
            "I16" => Some(DType::I16),
            "I32" => Some(DType::I32),
            "I64" => Some(DType::I64),
            "U8" => Some(DType::U8),
            _ => None,
        })
}

/// `NAME parent: [subgraph @P](%para1_x, ...) {`
pub(super) fn parse_graph_header(rest: &str) -> Option<PGraph> {
    let open = rest.rfind("(")?;
    let close = rest.rfind(')').filter(|&c| c > open)?;
    let head = rest[..open].trim();
    let (name, parent) = match head.split_once(" parent: [subgraph @") {
        Some((n, p)) => (n.trim(), Some(p.trim_end_matches(']').trim().to_string())),
        None => (head, None),
    };
    let params = rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| split_para(p).map(|(n, name)| (n, name, None)))
        .collect::<Option<Vec<_>>>()?;
    Some(PGraph {
        name: name.to_string(),
        parent,
        params,
        nodes: Vec::new(),
        output: None,
        header_line: 0,
        return_line: 0,
        monads: Vec::new(),
        weights: Vec::new(),
    })
}

/// `%3(label) = CALLEE(ARGS) primitive_attrs: {...} cnode_attrs: {...}`
pub(super) fn parse_cnode(line: &str) -> Result<PNode, String> {
    let rest = line.strip_prefix('%').ok_or("expected `%`")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let index: usize = rest[..digits].parse().map_err(|_| "bad node number")?;
    let rest = &rest[digits..];
    let rest = rest.strip_prefix('(').ok_or("expected the node's name")?;
    let close = matching(rest, '(', ')').ok_or("unbalanced name")?;
    let label = rest[..close].to_string();
    let rest = rest[close + 1..]
        .trim_start()
        .strip_prefix('=')
        .ok_or("expected `=`")?
        .trim_start();
    let mut p = Parser::new(rest);
    let (callee, args) = p.call()?;
    // Attributes on the primitive.
    let mut attrs = Vec::new();
    let tail = p.rest();
    if let Some(pos) = tail.find("primitive_attrs: {") {
        let inner = &tail[pos + "primitive_attrs: {".len()..];
        if let Some(end) = matching(inner, '{', '}') {
            for item in split_top(&inner[..end], ',') {
                if let Some((k, v)) = item.split_once(':') {
                    let mut vp = Parser::new(v.trim());
                    if let Ok(PRef::Const(c)) = vp.arg() {
                        if !matches!(c, Const::Opaque(_)) {
                            attrs.push((k.trim().to_string(), c));
                        }
                    }
                }
            }
        }
    }
    // MindSpore's backend (`convert_const_input_to_attr`) moves constant
    // inputs into attributes (`Cast(%1) primitive_attrs: {input_names: (x,
    // dst_type), dst_type: F32}`): they go back to their place among the inputs.
    let mut args = args;
    let names = match &callee {
        PCallee::Prim(name, _) => input_names(tail).or_else(|| {
            // Without `input_names`, only a node short of inputs moved some
            // (a primitive may also keep an input's value as an attribute:
            // `Gather(x, i, 0, 0) primitive_attrs: {batch_dims: I64(0)}`).
            moved_inputs(name).filter(|names| args.len() < names.len())
        }),
        PCallee::Value(_) => None,
    };
    if let Some(names) = names {
        for (k, name) in names.iter().enumerate() {
            if k > args.len() {
                break;
            }
            if let Some(pos) = attrs.iter().position(|(a, _)| a == name) {
                let (_, value) = attrs.remove(pos);
                args.insert(k, PRef::Const(value));
            }
        }
    }
    let callee = match callee {
        PCallee::Prim(name, _) => PCallee::Prim(name, attrs),
        other => other,
    };
    Ok(PNode {
        index,
        label,
        callee,
        args,
        ty: None,
        scope: None,
        line: 0,
    })
}

/// The names in a node's `input_names: (x, dst_type)` attribute (also
/// printed `[x, w]`), MindSpore's names for the primitive's inputs.
pub(super) fn input_names(tail: &str) -> Option<Vec<String>> {
    let start = tail.find("input_names: ")? + "input_names: ".len();
    let rest = &tail[start..];
    let close = match rest.chars().next()? {
        '(' => ')',
        '[' => ']',
        _ => return None,
    };
    let end = rest.find(close)?;
    Some(
        rest[1..end]
            .split(',')
            .map(|n| n.trim().trim_matches('"').to_string())
            .filter(|n| !n.is_empty())
            .collect(),
    )
}

/// MindSpore's names for a primitive's inputs where a kernel graph moved
/// some into attributes without printing `input_names`: its old-style
/// primitive's (`Cast(x, dst_type)`), else its 2.10 schema's.
pub(super) fn moved_inputs(prim: &str) -> Option<Vec<String>> {
    let bare = prim.strip_prefix("PrimFunc_").unwrap_or(prim);
    if bare == "Cast" {
        return Some(vec!["x".into(), "dst_type".into()]);
    }
    let schema = ops::mindspore::schema(bare)?;
    Some(schema.node_inputs().map(|a| a.name.to_string()).collect())
}

pub(super) struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn skip_ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    /// A name up to a delimiter.
    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let rest = self.rest();
        let end = rest
            .find(['(', ')', ',', '[', ']', ' ', '{', '}', ':'])
            .unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    /// Skips a bracketed annotation (`[@FuncUnion(...)]`).
    fn skip_brackets(&mut self) -> Result<(), String> {
        if self.rest().starts_with('[') {
            let inner = &self.rest()[1..];
            let end = matching(inner, '[', ']').ok_or("unbalanced `[`")?;
            self.pos += end + 2;
        }
        Ok(())
    }

    /// The text of a bracketed group starting at the cursor (after `open`).
    fn group(&mut self, open: char, close: char) -> Result<&'a str, String> {
        let inner = &self.rest()[open.len_utf8()..];
        let end = matching(inner, open, close).ok_or(format!("unbalanced `{open}`"))?;
        self.pos += open.len_utf8() + end + close.len_utf8();
        Ok(&inner[..end])
    }

    fn call(&mut self) -> Result<(PCallee, Vec<PRef>), String> {
        self.skip_ws();
        let callee = if self.eat("call @") {
            PCallee::Value(PRef::Graph(self.word().to_string()))
        } else if self.rest().starts_with('%') || self.rest().starts_with("$(") {
            let r = self.arg()?;
            self.skip_brackets()?;
            PCallee::Value(r)
        } else {
            let name = self.word().to_string();
            if name.is_empty() {
                return Err(format!("cannot read the callee in `{}`", self.rest()));
            }
            if self.rest().starts_with('[') {
                // A parameter printed by name, with its known value.
                self.skip_brackets()?;
                PCallee::Value(PRef::Bare(name))
            } else {
                PCallee::Prim(name, Vec::new())
            }
        };
        if !self.rest().starts_with('(') {
            return Err(format!("expected `(` in `{}`", self.rest()));
        }
        let inner = self.group('(', ')')?;
        let args = split_top(inner, ',')
            .into_iter()
            .map(|a| Parser::new(a.trim()).arg())
            .collect::<Result<Vec<_>, _>>()?;
        Ok((callee, args))
    }

    fn arg(&mut self) -> Result<PRef, String> {
        self.skip_ws();
        let rest = self.rest();
        if rest.starts_with("%para") {
            let w = self.word();
            let (n, _) = split_para(w).ok_or(format!("bad parameter `{w}`"))?;
            return Ok(PRef::Para(n));
        }
        if let Some(r) = rest.strip_prefix('%') {
            let digits = r.chars().take_while(|c| c.is_ascii_digit()).count();
            let n = r[..digits]
                .parse()
                .map_err(|_| format!("bad node `{rest}`"))?;
            self.pos += 1 + digits;
            return Ok(PRef::Node(n));
        }
        if rest.starts_with("$(") {
            self.pos += 1;
            let inner = self.group('(', ')')?;
            let inner = inner.trim().trim_start_matches('@');
            let (graph, label) = inner
                .rsplit_once(':')
                .ok_or(format!("bad captured value `{inner}`"))?;
            return Ok(PRef::Captured {
                graph: graph.to_string(),
                label: label.to_string(),
            });
        }
        if rest.starts_with('@') {
            self.pos += 1;
            return Ok(PRef::Graph(self.word().to_string()));
        }
        if rest.starts_with('(') {
            let inner = self.group('(', ')')?;
            let items = split_top(inner, ',')
                .into_iter()
                .map(|a| match Parser::new(a.trim()).arg()? {
                    PRef::Const(c) => Ok(c),
                    _ => Err("a tuple constant holding a non-constant".to_string()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(PRef::Const(Const::Tuple(items)));
        }
        if rest.starts_with('{') {
            let inner = self.group('{', '}')?;
            return Ok(PRef::Const(Const::Opaque(format!(
                "a dictionary `{{{inner}}}`"
            ))));
        }
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').ok_or("unterminated string")?;
            self.pos += end + 2;
            return Ok(PRef::Const(Const::Str(quoted[..end].to_string())));
        }
        let word = self.word();
        let after = self.rest();
        if after.starts_with('(') {
            let inner = self.group('(', ')')?.trim();
            if word == "Tensor" {
                if let Some(ty) = partial_tensor_type(inner) {
                    return Ok(PRef::PartialTensor(ty));
                }
            }
            return scalar_or_tensor(word, inner).map(PRef::Const);
        }
        if after.starts_with('[') {
            let inner = self.group('[', ']')?;
            return Ok(PRef::Const(match word {
                // The state tokens as values (`UMonad[U]`, `IOMonad[IO]`).
                "UMonad" | "IOMonad" => Const::Monad,
                "KeywordArg" => match inner.split_once("value :") {
                    Some((_, v)) => match Parser::new(v.trim()).arg()? {
                        PRef::Const(c) => c,
                        _ => Const::Opaque(format!("a keyword argument `{inner}`")),
                    },
                    None => Const::Opaque(format!("a keyword argument `{inner}`")),
                },
                "ValueProblem" => Const::Opaque(format!("MindSpore's `ValueProblem[{inner}]`")),
                _ => Const::Opaque(format!("`{word}[{inner}]`")),
            }));
        }
        Ok(match word {
            "None" => PRef::Const(Const::None),
            "true" | "True" => PRef::Const(Const::Bool(true)),
            "false" | "False" => PRef::Const(Const::Bool(false)),
            // Plain numbers: the items of a tuple attribute (`kernel_size: (3, 3)`).
            w if w.parse::<i64>().is_ok() => {
                PRef::Const(Const::Int(w.parse().unwrap_or(0), DType::I64))
            }
            w => match ms_dtype(w) {
                Some(d) => PRef::Const(Const::Type(d)),
                None if !w.is_empty() => PRef::Bare(w.to_string()),
                None => return Err(format!("cannot read `{rest}`")),
            },
        })
    }
}

/// `I64(1)`, `F32(0.5)`, `Bool(1)`, `Tensor(shape=[..], dtype=.., value=..)`.
pub(super) fn scalar_or_tensor(word: &str, inner: &str) -> Result<Const, String> {
    let int = |d: DType| -> Result<Const, String> {
        inner
            .parse::<i64>()
            .map(|v| Const::Int(v, d))
            .map_err(|_| format!("bad integer `{word}({inner})`"))
    };
    let float = |d: DType| -> Result<Const, String> {
        inner
            .parse::<f64>()
            .map(|v| Const::Float(v, d))
            .map_err(|_| format!("bad float `{word}({inner})`"))
    };
    match word {
        "I64" | "U64" => int(DType::I64),
        "I32" | "U32" => int(DType::I32),
        "I16" | "U16" => int(DType::I16),
        "I8" => int(DType::I8),
        "U8" => int(DType::U8),
        "F32" => float(DType::F32),
        "F64" => float(DType::F64),
        "F16" => float(DType::F16),
        "BF16" => float(DType::BF16),
        "Bool" => Ok(Const::Bool(inner != "0" && inner != "false")),
        "Tensor" => parse_tensor(inner),
        "NameSpace" => Ok(Const::Opaque(format!("a Python namespace `{inner}`"))),
        _ => Ok(Const::Opaque(format!("`{word}({inner})`"))),
    }
}

/// `shape=[2], dtype=Float32, value=[ 1.00000000e+00  1.00000000e+00]`
/// Field `name=` of a tensor constant's `shape=[..], dtype=.., value=..`.
pub(super) fn tensor_field<'a>(inner: &'a str, name: &str) -> Option<&'a str> {
    let start = inner.find(&format!("{name}="))? + name.len() + 1;
    let rest = &inner[start..];
    Some(if let Some(inner) = rest.strip_prefix('[') {
        let end = matching(inner, '[', ']').map_or(rest.len(), |e| e + 2);
        &rest[..end]
    } else {
        rest.split(',').next().unwrap_or(rest)
    })
}

/// The type of a tensor constant whose value the dump prints only in part
/// (`value=[[1 ... 1]]`); `None` for one printed whole.
pub(super) fn partial_tensor_type(inner: &str) -> Option<Ty> {
    if !tensor_field(inner, "value")?.contains("...") {
        return None;
    }
    let shape: Vec<i64> = tensor_field(inner, "shape")?
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect::<Option<_>>()?;
    let dtype = ms_dtype(tensor_field(inner, "dtype")?.trim())?;
    Some(Ty::Tensor(dtype, Shape::known(&shape)))
}

pub(super) fn parse_tensor(inner: &str) -> Result<Const, String> {
    let field = |name: &str| tensor_field(inner, name);
    let shape: Vec<usize> = field("shape")
        .ok_or("a tensor without `shape=`")?
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!("bad tensor shape `{d}`"))
        })
        .collect::<Result<_, _>>()?;
    let dtype_name = field("dtype").ok_or("a tensor without `dtype=`")?.trim();
    let dtype = ms_dtype(dtype_name).ok_or(format!("tensor dtype `{dtype_name}`"))?;
    let value = field("value").ok_or("a tensor without `value=`")?.trim();
    if value.contains("...") {
        return Ok(Const::Opaque(
            "a tensor constant the dump prints only in part".into(),
        ));
    }
    let numbers: Vec<&str> = value
        .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect();
    let n: usize = shape.iter().product();
    if numbers.len() != n {
        return Err(format!(
            "a tensor of shape {shape:?} printed with {} values",
            numbers.len()
        ));
    }
    let parse_f = |s: &str| {
        s.parse::<f64>()
            .map_err(|_| format!("bad tensor value `{s}`"))
    };
    let buffer = match dtype.storage() {
        DType::F32 => Buffer::F32(
            numbers
                .iter()
                .map(|s| parse_f(s).map(|x| x as f32))
                .collect::<Result<_, _>>()?,
        ),
        DType::F64 => Buffer::F64(
            numbers
                .iter()
                .map(|s| parse_f(s))
                .collect::<Result<_, _>>()?,
        ),
        DType::I64 => Buffer::I64(
            numbers
                .iter()
                .map(|s| parse_f(s).map(|x| x as i64))
                .collect::<Result<_, _>>()?,
        ),
        _ => Buffer::Bool(
            numbers
                .iter()
                .map(|s| matches!(*s, "True" | "true" | "1"))
                .collect(),
        ),
    };
    Tensor::new(dtype, shape, buffer)
        .map(Const::Tensor)
        .map_err(|e| e.to_string())
}
