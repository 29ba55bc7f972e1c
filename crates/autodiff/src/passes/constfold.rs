//! Constant folding: `TupleGetItem` of a `MakeTuple` or of a constant tuple,
//! `Switch` on a constant condition, `Depend` on a constant, `Neg(Neg(x))`,
//! arithmetic on literal scalars and comparisons of scalar constants.

use std::collections::HashMap;

use ir::{Body, DType, NodeId, NodeKind, ScalarConst, Value};

use crate::builder::replace_uses;

/// Folds what it can; returns whether anything changed.
pub fn run(body: &mut Body) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let resolve = |repl: &HashMap<NodeId, NodeId>, mut n: NodeId| {
        while let Some(&m) = repl.get(&n) {
            n = m;
        }
        n
    };
    for g in body.graph_ids().collect::<Vec<_>>() {
        for n in body.graph(g).nodes.clone() {
            let Some(p) = body.called_prim(n).map(|p| p.name.clone()) else {
                continue;
            };
            let args: Vec<NodeId> = body.inputs(n)[1..]
                .iter()
                .map(|&a| resolve(&repl, a))
                .collect();
            let folded = match (p.as_str(), args.as_slice()) {
                ("TupleGetItem", [t, i]) => {
                    let Some(k) = const_int(body, *i) else {
                        continue;
                    };
                    match &body.node(*t).kind {
                        NodeKind::Apply(_)
                            if body.called_prim(*t).is_some_and(|q| q.name == "MakeTuple") =>
                        {
                            let items = &body.inputs(*t)[1..];
                            index(items.len(), k).map(|k| resolve(&repl, items[k]))
                        }
                        NodeKind::Const(Value::Tuple(items)) => index(items.len(), k)
                            .map(|k| items[k].clone())
                            .map(|v| body.add_const(v, None)),
                        _ => None,
                    }
                }
                ("Switch", [c, a, b]) => match &body.node(*c).kind {
                    NodeKind::Const(Value::Scalar { value, .. }) => {
                        Some(if value.as_f64() != 0.0 { *a } else { *b })
                    }
                    _ => None,
                },
                // Comparisons of scalar constants (a loop's `t < t_end` once
                // unrolled: see `unroll`).
                (
                    "Less" | "LessEqual" | "Greater" | "GreaterEqual" | "Equal" | "NotEqual"
                    | "ScalarLt" | "ScalarLe" | "ScalarGt" | "ScalarGe" | "ScalarEq",
                    [x, y],
                ) => match (scalar(body, *x), scalar(body, *y)) {
                    (Some(a), Some(b)) => {
                        let v = match p.as_str() {
                            "Less" | "ScalarLt" => a < b,
                            "LessEqual" | "ScalarLe" => a <= b,
                            "Greater" | "ScalarGt" => a > b,
                            "GreaterEqual" | "ScalarGe" => a >= b,
                            "Equal" | "ScalarEq" => a == b,
                            _ => a != b,
                        };
                        Some(body.add_const(Value::bool(v), None))
                    }
                    _ => None,
                },
                ("Depend", [x, y]) => {
                    matches!(body.node(*y).kind, NodeKind::Const(_)).then_some(*x)
                }
                ("Neg", [x]) => {
                    if body.called_prim(*x).is_some_and(|q| q.name == "Neg") {
                        Some(resolve(&repl, body.inputs(*x)[1]))
                    } else {
                        literal(body, *x).map(|v| body.add_const(Value::float(-v), None))
                    }
                }
                ("Add" | "Sub" | "Mul", [x, y]) if int_literal(body, *x).is_some() => {
                    match (int_literal(body, *x), int_literal(body, *y)) {
                        (Some(a), Some(b)) => {
                            let v = match p.as_str() {
                                "Add" => a.checked_add(b),
                                "Sub" => a.checked_sub(b),
                                _ => a.checked_mul(b),
                            };
                            v.map(|v| body.add_const(Value::int(v), None))
                        }
                        _ => None,
                    }
                }
                ("Add" | "Sub" | "Mul" | "RealDiv", [x, y]) => {
                    match (literal(body, *x), literal(body, *y)) {
                        (Some(a), Some(b)) => {
                            let v = match p.as_str() {
                                "Add" => a + b,
                                "Sub" => a - b,
                                "Mul" => a * b,
                                _ => a / b,
                            };
                            Some(body.add_const(Value::float(v), None))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(to) = folded {
                if to != n {
                    repl.insert(n, to);
                }
            }
        }
    }
    let changed = !repl.is_empty();
    replace_uses(body, &repl);
    changed
}

fn index(len: usize, k: i64) -> Option<usize> {
    let k = if k < 0 { k + len as i64 } else { k };
    (0..len as i64).contains(&k).then_some(k as usize)
}

fn const_int(body: &Body, n: NodeId) -> Option<i64> {
    match &body.node(n).kind {
        NodeKind::Const(Value::Scalar { value, .. }) => value.as_i64(),
        _ => None,
    }
}

/// A scalar constant's value.
fn scalar(body: &Body, n: NodeId) -> Option<f64> {
    match &body.node(n).kind {
        NodeKind::Const(Value::Scalar { value, .. }) => Some(value.as_f64()),
        _ => None,
    }
}

/// A weak integer literal's value.
fn int_literal(body: &Body, n: NodeId) -> Option<i64> {
    match &body.node(n).kind {
        NodeKind::Const(Value::Scalar {
            value: ScalarConst::Int(i),
            dtype: DType::I64,
            weak: true,
        }) => Some(*i),
        _ => None,
    }
}

/// A weak float literal's value (folding it keeps its meaning).
fn literal(body: &Body, n: NodeId) -> Option<f64> {
    match &body.node(n).kind {
        NodeKind::Const(Value::Scalar {
            value: ScalarConst::Float(x),
            dtype: DType::F32,
            weak: true,
        }) => Some(*x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{dce, testutil::*};
    use expect_test::expect;

    #[test]
    fn folds_tuple_indexing_and_literals() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let t = p(&mut b, g, "MakeTuple", &[ps[0], ps[1]]);
        let one = int(&mut b, 1);
        let y = p(&mut b, g, "TupleGetItem", &[t, one]);
        let two = b.add_const(Value::float(2.0), None);
        let three = b.add_const(Value::float(3.0), None);
        let six = p(&mut b, g, "Mul", &[two, three]);
        let nn = p(&mut b, g, "Neg", &[y]);
        let back = p(&mut b, g, "Neg", &[nn]);
        let out = p(&mut b, g, "Mul", &[back, six]);
        b.graph_mut(g).output = Some(out);
        assert!(run(&mut b));
        dce::run(&mut b);
        expect![[r#"
            graph f(x, y) {
              %0 = Mul(y, 6.0)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }

    #[test]
    fn folds_constant_switch() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let t = b.add_const(Value::bool(false), None);
        let s = p(&mut b, g, "Switch", &[t, ps[0], ps[1]]);
        let out = p(&mut b, g, "Exp", &[s]);
        b.graph_mut(g).output = Some(out);
        assert!(run(&mut b));
        dce::run(&mut b);
        expect![[r#"
            graph f(x, y) {
              %0 = Exp(y)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }
}
