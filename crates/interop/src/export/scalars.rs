//! Numbers: arithmetic on known numbers folded, makers of constants written
//! as constants, and the rest as MindSpore's scalar primitives.

use super::*;

impl Exporter<'_> {
    /// An elementwise primitive on scalar constants (literals, or numbers
    /// `g` knows: folded before, or given to an inlined graph), evaluated.
    pub(super) fn fold_scalar(
        &self,
        g: &GraphBuilder,
        def: &ops::OpDef,
        args: &[NodeId],
    ) -> Option<Value> {
        let mut inputs = Vec::new();
        for &a in args {
            let Some(Value::Scalar { value, dtype, .. }) = self.const_number(g, a) else {
                return None;
            };
            inputs.push(ops::KValue::Tensor(Tensor::scalar(dtype, value.as_f64())));
        }
        let ops::KValue::Tensor(t) = ops::eager::call(def.name, &inputs, Vec::new()).ok()? else {
            return None;
        };
        let x = *t.to_f64_vec().first()?;
        let value = match t.dtype() {
            DType::Bool => ir::ScalarConst::Bool(x != 0.0),
            d if d.is_float() => ir::ScalarConst::Float(x),
            _ => ir::ScalarConst::Int(x as i64),
        };
        Some(Value::Scalar {
            value,
            dtype: t.dtype(),
            weak: false,
        })
    }

    /// The value of `Fill`/`Zeros`/`Ones` on constant arguments (small ones).
    pub(super) fn fold_maker(
        &self,
        item: usize,
        def: &ops::OpDef,
        p: &PrimRef,
        args: &[NodeId],
    ) -> Option<Tensor> {
        if !matches!(def.name, "Fill" | "Zeros" | "Ones") {
            return None;
        }
        let body = self.body(item);
        let mut inputs = Vec::new();
        for &a in args {
            let NodeKind::Const(c) = &body.node(a).kind else {
                return None;
            };
            let t = match c {
                Value::Scalar { value, dtype, .. } => Tensor::scalar(*dtype, value.as_f64()),
                Value::Tensor(t) => (**t).clone(),
                _ => return None,
            };
            inputs.push(ops::KValue::Tensor(t));
        }
        let attrs: Vec<(&'static str, AttrValue)> = p
            .attrs
            .iter()
            .filter_map(|(k, v)| def.param(k).map(|q| (q.name, v.clone())))
            .collect();
        match ops::eager::call(def.name, &inputs, attrs) {
            Ok(ops::KValue::Tensor(t)) if t.numel() <= 4096 => Some(t),
            _ => None,
        }
    }

    /// Scalar arithmetic and comparisons: MindSpore's scalar primitives.
    pub(super) fn scalar_call(
        &mut self,
        g: &mut GraphBuilder,
        name: &str,
        args: &[NodeId],
        label: &str,
        ty: Option<&AbsVal>,
    ) -> Result<String, ExportError> {
        // `ZerosLike`/`OnesLike` of a number (a recursion counter's
        // gradient) is that number's 0 or 1.
        if let ("ZerosLike" | "OnesLike", [x]) = (name, args) {
            if let Some(AbsVal::Scalar { dtype, .. }) = self.joined(g.key.item, *x) {
                let one = name == "OnesLike";
                let value = if dtype.is_float() {
                    ir::ScalarConst::Float(if one { 1.0 } else { 0.0 })
                } else if dtype.is_bool() {
                    ir::ScalarConst::Bool(one)
                } else {
                    ir::ScalarConst::Int(i64::from(one))
                };
                let v = Value::Scalar {
                    value,
                    dtype,
                    weak: false,
                };
                return g.constant(self, &v, None);
            }
        }
        let ms = match name {
            "Add" => "ScalarAdd",
            "Sub" => "ScalarSub",
            "Mul" => "ScalarMul",
            "RealDiv" => "ScalarDiv",
            "Less" => "ScalarLt",
            "LessEqual" => "ScalarLe",
            "Greater" => "ScalarGt",
            "GreaterEqual" => "ScalarGe",
            "Equal" => "ScalarEq",
            // MindSpore's own scalar primitives (the registry has them too),
            // when they take no attributes.
            other
                if other.starts_with("Scalar")
                    && ops::lookup(other).is_some_and(|d| d.attrs().next().is_none()) =>
            {
                other
            }
            other => {
                return Err(ExportError::Unsupported(format!(
                    "`{other}` on scalars (MindIR has no scalar form of it)"
                )))
            }
        };
        let mut ins = Vec::new();
        for &a in args {
            ins.push(self.operand(g, a, None)?);
        }
        let prim = self.prim(ms, false, Vec::new());
        Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty))
    }
}
