//! Shape rules are total: whatever the shapes of the inputs (scalars,
//! empty tensors, unknown ranks, unknown dimensions), a rule answers with a
//! value or an error, never a panic (found by gradgen: `Squeeze` and `Cross`
//! indexed the dimensions of a rank-0 input).

use ir::{AbsVal, Dim, Shape};
use ops::{InferCall, KValue};

fn variants(v: &AbsVal) -> Vec<AbsVal> {
    let AbsVal::Tensor { dtype, shape } = v else {
        return Vec::new();
    };
    let mut out: Vec<AbsVal> = [&[][..], &[0], &[1], &[3], &[1, 1], &[2, 0], &[4, 1, 3]]
        .iter()
        .map(|d| AbsVal::tensor(*dtype, d))
        .collect();
    out.push(AbsVal::Tensor {
        dtype: *dtype,
        shape: Shape::Unranked,
    });
    if let Shape::Ranked(dims) = shape {
        out.push(AbsVal::Tensor {
            dtype: *dtype,
            shape: Shape::Ranked(vec![Dim::Unknown; dims.len()]),
        });
    }
    out
}

#[test]
fn shape_rules_never_panic() {
    let mut panics = std::collections::BTreeSet::new();
    for sample in ops::defs::samples() {
        let op = ops::lookup(sample.op).unwrap();
        let given: Vec<(String, ops::AttrValue)> = sample
            .attrs
            .iter()
            .filter_map(|(k, v)| Some((k.to_string(), ops::check_attr(op, k, v).ok()?)))
            .collect();
        let attrs = ops::resolve_attrs(op, &given);
        let inputs: Vec<AbsVal> = sample.inputs.iter().map(ops::eager::abstract_of).collect();
        // One input at a time (`Some(i)`), then all of them alike (`None`).
        let which = (0..inputs.len())
            .filter(|&i| matches!(sample.inputs[i], KValue::Tensor(_)))
            .map(Some)
            .chain([None]);
        for i in which {
            let Some(first) =
                i.or_else(|| (0..inputs.len()).find(|&j| !variants(&inputs[j]).is_empty()))
            else {
                continue;
            };
            for (k, v) in variants(&inputs[first]).into_iter().enumerate() {
                let mut ins = inputs.clone();
                match i {
                    Some(i) => ins[i] = v.clone(),
                    None => {
                        for x in ins.iter_mut() {
                            if let Some(w) = variants(x).get(k) {
                                *x = w.clone();
                            }
                        }
                    }
                }
                let i = i.map_or("every input".to_string(), |i| format!("input {i}"));
                let r = std::panic::catch_unwind(|| {
                    (op.infer)(&InferCall {
                        op,
                        inputs: &ins,
                        attrs: &attrs,
                    })
                    .map(|_| ())
                });
                if r.is_err() {
                    panics.insert(format!("{} with {i} {v}", sample.op));
                }
            }
        }
    }
    assert!(
        panics.is_empty(),
        "{} shape rules panic:\n{}",
        panics.len(),
        panics.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The two gradgen found, with the attributes it drew: an error each.
#[test]
fn squeeze_and_cross_of_scalars_are_errors() {
    let s = KValue::Tensor(tensor::Tensor::from_f64(vec![], vec![2.0]).unwrap());
    let e = ops::eager::call(
        "Squeeze",
        std::slice::from_ref(&s),
        vec![("axis", ops::AttrValue::Int(0))],
    );
    assert!(e.unwrap_err().to_string().contains("scalar"));
    let e = ops::eager::call(
        "Cross",
        &[s.clone(), s],
        vec![("dim", ops::AttrValue::Int(-1))],
    );
    assert!(e.unwrap_err().to_string().contains("scalars"));
}

/// A rule that could not tell its input was a scalar (`ArgMaxWithValue` of a
/// value the analysis did not follow, found by gradgen) scatters a
/// one-element update into it: that is the scalar itself, and back.
#[test]
fn index_scatter_into_a_scalar() {
    let like = KValue::Tensor(tensor::Tensor::from_f64(vec![], vec![5.0]).unwrap());
    let idx = ops::eager::ints(ir::DType::I64, &[1], &[0]);
    let upd = KValue::Tensor(tensor::Tensor::from_f64(vec![1], vec![2.5]).unwrap());
    let axis = vec![("axis", ops::AttrValue::Int(0))];
    let r = ops::eager::call(
        "_IndexScatterAdd",
        &[idx.clone(), upd, like.clone()],
        axis.clone(),
    );
    let KValue::Tensor(t) = r.unwrap() else {
        panic!()
    };
    assert_eq!((t.shape(), t.to_f64_vec()), (&[][..], vec![2.5]));
    let r = ops::eager::call("_IndexGather", &[like, idx], axis);
    let KValue::Tensor(t) = r.unwrap() else {
        panic!()
    };
    assert_eq!((t.shape(), t.to_f64_vec()), (&[1][..], vec![5.0]));
}
