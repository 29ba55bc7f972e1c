//! The matrix helpers' gradients: Trace's.

use ir::{AttrValue, NodeId};

use super::{Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_TraceGrad" => {
            // `grad` on the diagonal: `Eye(n, m) · grad`.
            let like = c.shape(1)?;
            let [n, m] = like.as_slice() else {
                return None;
            };
            let (n, m) = (n.known()?, m.known()?);
            let eye = e.prim(
                "Eye",
                vec![
                    ("n", AttrValue::Int(n)),
                    ("m", AttrValue::Int(m)),
                    ("dtype", AttrValue::DType(c.dtype(0)?)),
                ],
                &[],
            );
            Some(e.prim("Mul", Vec::new(), &[eye, c.args[0]]))
        }
        _ => None,
    }
}
