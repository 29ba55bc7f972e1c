//! Each op record's schema: derived from MindSpore 2.10's table with its
//! overrides (`Schema::MindSpore`), or the record's own (`Schema::Own`).
//!
//! Every derived schema builds; an own schema of an op MindSpore has (with a
//! known signature) says why it is not derived. `print_derived_schemas`
//! (ignored: run it with `--ignored --nocapture`) writes, for each own schema
//! of an op MindSpore has, the `Schema::ms(...)` that gives the same
//! parameters: the overrides a schema needs, each with its reason. It made
//! the migration from hand-written `ParamDef`s; use it for a new record.

use ops::schema::{apply, build, derive, ms_name_of, why, Change, Override};
use ops::{AttrDefault, AttrType, Category, OpDef, ParamDef, ParamKind, Schema};

/// Not a MindSpore primitive of its own: the registry's private helpers and
/// composites.
fn private(op: &OpDef) -> bool {
    op.name.starts_with('_') || matches!(op.category, Category::Composite | Category::Internal)
}

#[test]
fn every_schema_builds() {
    let mut derived = 0;
    for op in ops::registry().values() {
        let params = build(op).unwrap_or_else(|e| panic!("`{}`: {e}", op.name));
        assert_eq!(params, op.params(), "{}", op.name);
        if let Schema::MindSpore { overrides, .. } = op.schema {
            derived += 1;
            for o in overrides {
                assert!(
                    !o.why.is_empty(),
                    "`{}`: an override without a reason",
                    op.name
                );
            }
        }
    }
    assert!(derived > 300, "{derived} derived schemas");
}

#[test]
fn own_schemas_of_mindspore_primitives_say_why() {
    let mut unexplained = Vec::new();
    for op in ops::public_ops() {
        if let Schema::Own { why, .. } = op.schema {
            if !private(op) && derive(ms_name_of(op.name), op.name).is_some() && why.is_empty() {
                unexplained.push(op.name);
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "own schemas of MindSpore primitives without a reason (derive them: \
         `cargo test -p ops --test schemas -- --ignored --nocapture`): {unexplained:?}"
    );
}

/// Reasons of `tests/mindspore_schema.rs`' `DEVIATIONS`, for the overrides
/// they explain.
const DEVIATIONS: &[(&str, &str, &str)] = &[
    ("ScalarToTensor", "default dtype", "exported graphs always pass the dtype; without one the registry keeps the number's dtype, as MindSpore's graph-mode kernel does (checked by the oracle)"),
    ("Conv2DTranspose", "tensor input_sizes", "a constant shape in every exported model: the registry takes it as an attribute, and import reads MindSpore's constant tensor into it"),
    ("Conv2DTranspose", "type pad_list", "the registry keeps the explicit padding (4 ints) that MindSpore stores beside `pad_mode`"),
    ("MirrorPad", "tensor paddings", "constant paddings: an attribute in the registry, read from MindSpore's constant tensor"),
    ("PadV3", "tensor paddings", "constant paddings: an attribute in the registry, read from MindSpore's constant tensor"),
    ("Zeros", "default dtype", "MindSpore's `dtype=None` means float32, the registry's default"),
    ("Ones", "default dtype", "MindSpore's `dtype=None` means float32, the registry's default"),
    ("LayerNormGrad", "attr epsilon", "MindSpore's bprop of LayerNorm sets the forward's `epsilon` on the LayerNormGrad primitive (`primitive_attrs: {epsilon: ...}` in its dumps), not as an input; its kernel defaults it to 1e-7, as the registry (checked by the oracle)"),
];

fn dev(op: &str, key: &str) -> Option<&'static str> {
    DEVIATIONS
        .iter()
        .find(|(o, k, _)| *o == op && *k == key)
        .map(|d| d.2)
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

fn ty_rs(t: AttrType) -> String {
    match t {
        AttrType::Str(v) => format!(
            "AttrType::Str(&[{}])",
            v.iter().map(|s| lit(s)).collect::<Vec<_>>().join(", ")
        ),
        other => format!("AttrType::{other:?}"),
    }
}

fn default_rs(d: Option<AttrDefault>) -> String {
    match d {
        None => "None".into(),
        Some(d) => format!(
            "Some(AttrDefault::{})",
            match d {
                AttrDefault::Int(i) => format!("Int({i})"),
                AttrDefault::Float(x) => format!("Float({x:?})"),
                AttrDefault::Bool(b) => format!("Bool({b})"),
                AttrDefault::Str(s) => format!("Str({})", lit(s)),
                AttrDefault::Ints(v) => format!("Ints(&{v:?})"),
                AttrDefault::DType(d) => format!("DType(DType::{d:?})"),
                AttrDefault::None => "None".into(),
            }
        ),
    }
}

fn param_rs(p: &ParamDef) -> String {
    match p.kind {
        ParamKind::Input => format!("ParamDef::input({}, {})", lit(p.name), lit(p.doc)),
        ParamKind::Attr { ty, default } => format!(
            "ParamDef::attr({}, {}, {}, {})",
            lit(p.name),
            ty_rs(ty),
            default_rs(default),
            lit(p.doc)
        ),
    }
}

fn why_rs(w: &str) -> String {
    for (n, v) in [
        ("INPUT_NAMES", why::INPUT_NAMES),
        ("STRINGS", why::STRINGS),
        ("DEFAULT", why::DEFAULT),
        ("TYPE", why::TYPE),
        ("TO_ATTR", why::TO_ATTR),
        ("TO_INPUT", why::TO_INPUT),
        ("DROPPED", why::DROPPED),
        ("EXTRA", why::EXTRA),
    ] {
        if v == w {
            return format!("why::{n}");
        }
    }
    lit(w)
}

fn override_rs(o: &Override) -> String {
    let w = why_rs(o.why);
    match o.change {
        Change::Inputs(n) => format!(
            "Override::inputs(&[{}], {w})",
            n.iter().map(|s| lit(s)).collect::<Vec<_>>().join(", ")
        ),
        Change::Drop(n) => format!("Override::drop({}, {w})", lit(n)),
        Change::Set(n, ParamKind::Input) => format!("Override::input({}, {w})", lit(n)),
        Change::Set(n, ParamKind::Attr { ty, default }) => format!(
            "Override::attr({}, {}, {}, {w})",
            lit(n),
            ty_rs(ty),
            default_rs(default)
        ),
        Change::Insert(after, p) => {
            format!("Override::insert({}, {}, {w})", lit(after), param_rs(&p))
        }
    }
}

/// Overrides turning `d` (derived) into `ours`, or why none can.
fn overrides_for(op: &str, d: &[ParamDef], ours: &[ParamDef]) -> Result<Vec<Override>, String> {
    let mut out = Vec::new();
    let mut cur: Vec<ParamDef> = d.to_vec();
    let leak =
        |v: Vec<&'static str>| -> &'static [&'static str] { Box::leak(v.into_boxed_slice()) };
    // Roles that differ, by name.
    for o in ours {
        if let Some(c) = cur.iter_mut().find(|c| c.name == o.name) {
            if c.is_input() != o.is_input() {
                let w = if o.is_input() {
                    dev(op, &format!("attr {}", o.name)).unwrap_or(why::TO_INPUT)
                } else {
                    dev(op, &format!("tensor {}", o.name)).unwrap_or(why::TO_ATTR)
                };
                out.push(Override {
                    change: Change::Set(o.name, o.kind),
                    why: w,
                });
                c.kind = o.kind;
            }
        }
    }
    // Inputs by position, where the counts agree.
    let di: Vec<&str> = cur
        .iter()
        .filter(|p| p.is_input())
        .map(|p| p.name)
        .collect();
    let oi: Vec<&'static str> = ours
        .iter()
        .filter(|p| p.is_input())
        .map(|p| p.name)
        .collect();
    if di.len() == oi.len()
        && di != oi
        && oi
            .iter()
            .all(|n| !cur.iter().any(|p| !p.is_input() && p.name == *n))
    {
        out.push(Override::inputs(leak(oi.clone()), why::INPUT_NAMES));
        cur = apply(cur, &out[out.len() - 1..], &[]).map_err(|e| e.to_string())?;
    }
    // Drop what ours lacks.
    for p in cur.clone() {
        if !ours.iter().any(|o| o.name == p.name) {
            out.push(Override::drop(p.name, why::DROPPED));
        }
    }
    cur.retain(|p| ours.iter().any(|o| o.name == p.name));
    // Set kinds that differ.
    for o in ours {
        if let Some(c) = cur.iter_mut().find(|c| c.name == o.name) {
            if c.kind != o.kind {
                let w = match (c.kind, o.kind) {
                    (
                        ParamKind::Attr {
                            ty: t1,
                            default: d1,
                        },
                        ParamKind::Attr {
                            ty: t2,
                            default: d2,
                        },
                    ) => {
                        if t1 != t2 && d1 == d2 {
                            if matches!((t1, t2), (AttrType::Str(_), AttrType::Str(_))) {
                                why::STRINGS
                            } else {
                                dev(op, &format!("type {}", o.name)).unwrap_or(why::TYPE)
                            }
                        } else if t1 == t2 {
                            dev(op, &format!("default {}", o.name)).unwrap_or(why::DEFAULT)
                        } else if matches!((t1, t2), (AttrType::Str(_), AttrType::Str(_))) {
                            why::STRINGS
                        } else {
                            dev(op, &format!("type {}", o.name))
                                .or(dev(op, &format!("default {}", o.name)))
                                .unwrap_or(why::TYPE)
                        }
                    }
                    _ => unreachable!(),
                };
                out.push(Override {
                    change: Change::Set(o.name, o.kind),
                    why: w,
                });
                c.kind = o.kind;
            }
        }
    }
    // Insert what MindSpore lacks, in ours' order.
    for (i, o) in ours.iter().enumerate() {
        if !cur.iter().any(|c| c.name == o.name) {
            let after = if i == 0 { "" } else { ours[i - 1].name };
            let mut p = *o;
            p.doc = o.doc;
            out.push(Override::insert(
                after,
                p,
                dev(op, &format!("attr {}", o.name)).unwrap_or(why::EXTRA),
            ));
            let pos = if after.is_empty() {
                0
            } else {
                cur.iter().position(|c| c.name == after).unwrap() + 1
            };
            cur.insert(pos, p);
        }
    }
    let names: Vec<&str> = cur.iter().map(|p| p.name).collect();
    let want: Vec<&str> = ours.iter().map(|p| p.name).collect();
    if names != want {
        return Err(format!(
            "order differs: MindSpore's {names:?}, the registry's {want:?}"
        ));
    }
    Ok(out)
}

#[test]
#[ignore = "a tool: prints the derived schema of each own schema of a MindSpore primitive"]
fn print_derived_schemas() {
    let mut ops: Vec<_> = ops::registry().values().copied().collect();
    ops.sort_by_key(|o| o.name);
    for op in ops {
        let Schema::Own { params: ours, .. } = op.schema else {
            continue;
        };
        if private(op) {
            continue;
        }
        let Some(d) = derive(ms_name_of(op.name), op.name) else {
            continue;
        };
        match overrides_for(op.name, &d, ours) {
            Ok(ov) => {
                let inserted: Vec<&str> = ov
                    .iter()
                    .filter_map(|o| match o.change {
                        Change::Insert(_, p) => Some(p.name),
                        _ => None,
                    })
                    .collect();
                let docs: Vec<(&str, &str)> = ours
                    .iter()
                    .filter(|p| !p.doc.is_empty() && !inserted.contains(&p.name))
                    .map(|p| (p.name, p.doc))
                    .collect();
                assert_eq!(apply(d.clone(), &ov, &docs).unwrap(), ours, "{}", op.name);
                println!(
                    "{}:\nSchema::ms(\n&[{}],\n&[{}],\n)",
                    op.name,
                    ov.iter()
                        .map(|o| override_rs(o) + ",\n")
                        .collect::<String>(),
                    docs.iter()
                        .map(|(n, d)| format!("({}, {}),\n", lit(n), lit(d)))
                        .collect::<String>()
                );
            }
            Err(e) => println!("{}: {e}", op.name),
        }
    }
}
