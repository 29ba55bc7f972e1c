//! The registry against MindSpore 2.10's own definitions of its primitives
//! (`ops::mindspore::PRIMS`, generated from MindSpore's sources).
//!
//! Every public registry primitive named as a MindSpore primitive must line up
//! with it: the same number of tensor inputs, each registry attribute one of
//! MindSpore's arguments by name (or by a row of `ops::mindspore::ALIASES`),
//! of a compatible type and with the same default. That is what lets import
//! and export map models with no per-primitive code. Every mismatch is printed;
//! the test fails on any that neither an override of the op's schema (which
//! gives its reason: `ops::schema`) nor `DEVIATIONS` explains.

use ops::mindspore::{self, mapping, schema, ArgMap, ArgRule, MsArg, MsTy, MsValue, ALIASES};
use ops::{AttrDefault, AttrType, Category, Change, OpDef, ParamKind, Schema};

/// Known, deliberate deviations of the registry from MindSpore 2.10 that no
/// override of a schema states (argument names `ALIASES` renames for import
/// and export): `(primitive, what, why)`. `what` is the key a mismatch prints.
const DEVIATIONS: &[(&str, &str, &str)] = &[
    (
        "Transpose",
        "name dims",
        "the registry calls MindSpore 2.10's `dims` `perm` (MindSpore's older name, and the DSL's \
         documented one); ALIASES renames it",
    ),
    (
        "Tile",
        "name dims",
        "the registry calls MindSpore 2.10's `dims` `multiples` (MindSpore's older name); ALIASES \
         renames it",
    ),
    (
        "Zeros",
        "name size",
        "the registry calls `Zeros`' `size` `shape`, as `Ones` (and every other maker) does; \
         ALIASES renames it",
    ),
    (
        "Fill",
        "name type",
        "the registry calls old-style `Fill`'s `type` input `dtype`, as its other makers do; \
         ALIASES renames it",
    ),
];

/// The reason the schema of `def` gives for deviating from MindSpore in its
/// parameter `arg`: an override's, or an own schema's.
fn override_of(def: &OpDef, arg: &str) -> Option<&'static str> {
    match def.schema {
        Schema::MindSpore { overrides, .. } => overrides
            .iter()
            .find(|o| match o.change {
                Change::Set(n, _) | Change::Drop(n) => n == arg,
                Change::Insert(_, p) => p.name == arg,
                Change::Inputs(names) => names.contains(&arg),
            })
            .map(|o| o.why),
        Schema::Own { why, .. } => (!why.is_empty()).then_some(why),
    }
}

/// A registry attribute type and a MindSpore argument type that can hold the
/// same values. (By the words of `AttrType::describe`, so that attribute
/// types added later are judged too.)
fn compatible(ours: AttrType, ms: MsTy) -> bool {
    use MsTy as M;
    let text = ours.describe();
    let has = |w: &str| {
        text.split(|c: char| !c.is_ascii_alphabetic())
            .any(|x| x.strip_suffix('s').unwrap_or(x) == w)
    };
    match ms {
        M::Any => true,
        M::Bool => has("bool") || has("number"),
        M::Int => has("int") || has("number"),
        M::Float => has("float") || has("number"),
        M::Number | M::TensorOrScalar => has("number") || has("int") || has("float"),
        M::Str | M::Enum(_) => has("str"),
        // An int where MindSpore takes a tuple too: import and export convert.
        M::Ints | M::Pair | M::IntTuple => has("int"),
        M::Floats => has("float"),
        M::DType => has("dtype"),
        // A constant MindSpore documents as a tensor (`paddings`, `input_sizes`).
        M::Tensor => has("int") || has("float") || has("number") || has("bool"),
        M::Tensors => false,
    }
}

/// Whether a registry default is MindSpore's.
fn same_default(ours: AttrDefault, ms: MsValue) -> bool {
    match (ours, ms) {
        (AttrDefault::Int(a), MsValue::Int(b)) => a == b,
        // `1` is `(1, 1)` and `(1, 1, 1, 1)` to windows and strides.
        (AttrDefault::Int(a), MsValue::Ints(b)) => !b.is_empty() && b.iter().all(|&x| x == a),
        (AttrDefault::Ints(a), MsValue::Int(b)) => a.len() == 1 && a[0] == b,
        (AttrDefault::Float(a), MsValue::Float(b)) => a == b || (a - b).abs() < 1e-12,
        (AttrDefault::Float(a), MsValue::Int(b)) => a == b as f64,
        (AttrDefault::Bool(a), MsValue::Bool(b)) => a == b,
        // The registry and MindSpore match strings case-insensitively.
        (AttrDefault::Str(a), MsValue::Str(b)) => a.eq_ignore_ascii_case(b),
        (AttrDefault::Ints(a), MsValue::Ints(b)) => a == b,
        (AttrDefault::DType(d), MsValue::DType(n)) => dtype_name(d) == n,
        (AttrDefault::None, MsValue::None) => true,
        _ => false,
    }
}

fn dtype_name(d: ops::DType) -> &'static str {
    use ops::DType::*;
    match d {
        Bool => "bool_",
        I8 => "int8",
        I16 => "int16",
        I32 => "int32",
        I64 => "int64",
        U8 => "uint8",
        F16 => "float16",
        F32 => "float32",
        F64 => "float64",
        BF16 => "bfloat16",
    }
}

/// The MindSpore argument registry attribute `attr` of `def` is, by a row of
/// ALIASES or by name.
fn ms_arg_of(ms: &str, def: &OpDef, attr: &str) -> Option<&'static MsArg> {
    let prim = schema(ms)?;
    let renamed = ALIASES
        .iter()
        .filter(|a| a.ms == ms && a.ours == def.name)
        .flat_map(|a| a.args.iter())
        .find(|(_, r)| matches!(r, ArgRule::Attr(n) | ArgRule::AttrConv(n, _) if *n == attr))
        .map(|(n, _)| *n);
    prim.arg(renamed.unwrap_or(attr))
}

/// `(key, message)` for each way `def` departs from MindSpore's `ms`.
fn mismatches(ms: &str, def: &'static OpDef) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(prim) = schema(ms) else {
        out.push((
            "name".into(),
            format!("`{}` is not a MindSpore 2.10 primitive", def.name),
        ));
        return out;
    };
    let Some(args) = prim.args else {
        return out;
    };
    // Arguments the aliases rename.
    for a in ALIASES.iter().filter(|a| a.ms == ms && a.ours == def.name) {
        for (n, r) in a.args {
            if matches!(r, ArgRule::Attr(_) | ArgRule::AttrConv(..)) {
                out.push((
                    format!("name {n}"),
                    format!("MindSpore's `{n}` is the registry's `{r:?}`"),
                ));
            }
        }
    }
    match mapping(ms) {
        None => out.push(("inputs".into(), "no mapping".into())),
        Some(Err(e)) => out.push(("inputs".into(), e.clone())),
        Some(Ok(m)) => {
            if let Some(map) = &m.args {
                let node_inputs: Vec<&MsArg> = prim.node_inputs().collect();
                for (a, how) in node_inputs.iter().zip(map) {
                    if matches!(a.ty, MsTy::Tensor | MsTy::Tensors) && !matches!(how, ArgMap::Input)
                    {
                        out.push((
                            format!("tensor {}", a.name),
                            format!("MindSpore's tensor `{}` is not a registry input", a.name),
                        ));
                    }
                }
            }
        }
    }
    for p in def.attrs() {
        let ParamKind::Attr { ty, default } = p.kind else {
            continue;
        };
        let Some(a) = ms_arg_of(ms, def, p.name) else {
            let names: Vec<&str> = args.iter().map(|a| a.name).collect();
            out.push((
                format!("attr {}", p.name),
                format!(
                    "the registry's attribute `{}` is not an argument of MindSpore's `{ms}` ({})",
                    p.name,
                    names.join(", ")
                ),
            ));
            continue;
        };
        if !compatible(ty, a.ty) {
            out.push((
                format!("type {}", p.name),
                format!(
                    "`{}` is {} in the registry, {:?} (`{}`) in MindSpore",
                    p.name,
                    ty.describe(),
                    a.ty,
                    a.decl
                ),
            ));
        }
        match (default, a.default) {
            (Some(d), Some(m)) if !matches!(m, MsValue::Other(_)) && !same_default(d, m) => out
                .push((
                    format!("default {}", p.name),
                    format!(
                        "`{}` defaults to {} in the registry, {m} in MindSpore",
                        p.name,
                        d.value()
                    ),
                )),
            (Some(d), None) => out.push((
                format!("default {}", p.name),
                format!(
                    "`{}` defaults to {} in the registry; MindSpore requires it",
                    p.name,
                    d.value()
                ),
            )),
            (None, Some(m)) => out.push((
                format!("default {}", p.name),
                format!(
                    "`{}` is required in the registry; MindSpore defaults it to {m}",
                    p.name
                ),
            )),
            _ => {}
        }
    }
    out
}

#[test]
fn registry_lines_up_with_mindspore() {
    let mut failures = Vec::new();
    let mut used = vec![false; DEVIATIONS.len()];
    let mut lined_up = 0;
    let mut checked = 0;
    let mut overridden = 0;
    for def in ops::public_ops() {
        if def.category == Category::Structure {
            continue; // MakeTuple and the like: import and export handle them.
        }
        // The MindSpore primitive it is: its own name, or the alias export uses.
        let ms = ALIASES
            .iter()
            .find(|a| a.ours == def.name && a.export)
            .map_or(def.name, |a| a.ms);
        checked += 1;
        let found = mismatches(ms, def);
        if found.is_empty() {
            lined_up += 1;
        }
        for (key, message) in found {
            let arg = key.split_once(' ').map_or("", |(_, a)| a);
            if let Some(why) = override_of(def, arg) {
                overridden += 1;
                println!("{}: {key}: {message} (overridden: {why})", def.name);
                continue;
            }
            let allowed = DEVIATIONS
                .iter()
                .position(|(op, k, _)| *op == def.name && *k == key);
            match allowed {
                Some(i) => {
                    used[i] = true;
                    println!(
                        "{}: {key}: {message} (allowed: {})",
                        def.name, DEVIATIONS[i].2
                    );
                }
                None => {
                    println!("{}: {key}: {message}", def.name);
                    failures.push(format!("{}: {key}: {message}", def.name));
                }
            }
        }
    }
    for (i, (op, key, _)) in DEVIATIONS.iter().enumerate() {
        // (A row for a primitive this branch lacks waits for it.)
        if !used[i] && ops::lookup(op).is_some() {
            failures.push(format!(
                "DEVIATIONS lists `{op}: {key}`, which no longer occurs: remove it"
            ));
        }
    }
    println!(
        "{checked} registry primitives checked against MindSpore {}: {lined_up} line up exactly, \
         {overridden} deviations stated by overrides, {} allowed",
        mindspore::SERIES,
        DEVIATIONS.len()
    );
    assert!(
        failures.is_empty(),
        "registry primitives that do not line up with MindSpore 2.10 (fix the OpDef to follow \
         MindSpore's definition, or state the deviation with an override of its schema, or \
         add a row to ops::mindspore::ALIASES and a reason to DEVIATIONS):\n{}",
        failures.join("\n")
    );
}

/// Every alias names a registry primitive, and its arguments derive.
#[test]
fn aliases_map() {
    for a in ALIASES {
        let def =
            ops::lookup(a.ours).unwrap_or_else(|| panic!("{} maps to unknown {}", a.ms, a.ours));
        assert!(
            a.ms == a.ours || ops::lookup(a.ms).is_none(),
            "the registry has `{}` of its own now: remove its row mapping it to `{}` from \
             ops::mindspore::ALIASES",
            a.ms,
            a.ours
        );
        if def.category == Category::Structure {
            continue;
        }
        match mapping(a.ms) {
            Some(Ok(m)) => assert_eq!(m.def.name, a.ours),
            Some(Err(e)) => panic!("{}: {e}", a.ms),
            None => panic!("{}: no mapping", a.ms),
        }
        for (n, _) in a.args {
            if let Some(p) = schema(a.ms) {
                assert!(
                    p.arg(n).is_some(),
                    "{}: MindSpore has no argument `{n}`",
                    a.ms
                );
            }
        }
    }
}

/// Each registry primitive is exported one way.
#[test]
fn each_registry_primitive_exports_one_way() {
    for def in ops::public_ops() {
        let n = ALIASES
            .iter()
            .filter(|a| a.export && a.ours == def.name && a.ms != def.name)
            .count();
        assert!(n <= 1, "{} is exported {n} ways", def.name);
        if n == 1 {
            assert!(
                schema(def.name).is_none()
                    || ALIASES
                        .iter()
                        .any(|a| a.ms == def.name && a.ours != def.name),
                "{} is a MindSpore primitive of its own, and an alias exports it as another",
                def.name
            );
        }
    }
}
