use super::*;

#[test]
fn abstracts() {
    assert_eq!(
        parse_abstract("Tensor[Float32], (3)"),
        Some(Ty::Tensor(DType::F32, Shape::known(&[3])))
    );
    assert_eq!(
        parse_abstract("Tensor[Float32], (), value=..."),
        Some(Ty::Tensor(DType::F32, Shape::known(&[])))
    );
    assert_eq!(
        parse_abstract("Int64, NoShape"),
        Some(Ty::Scalar(DType::I64))
    );
    assert_eq!(parse_abstract("Func, NoShape"), None);
    // Repeats that would exhaust memory: not a known type, at once.
    assert_eq!(
        parse_abstract("Tuple[Tensor[Float32]*99999999999], NoShape"),
        None
    );
    assert_eq!(
        parse_abstract(&format!(
            "Tuple[Tuple[{}*4096]*4096], NoShape",
            "Tensor[Float32]"
        )),
        None
    );
    assert!(matches!(
        parse_abstract("Tuple[Tensor[Float32]*3], TupleShape((2)*3)"),
        Some(Ty::Tuple(items)) if items.len() == 3
    ));
    assert_eq!(
        parse_abstract(
            "Tuple[Tensor[Float32],None,Bool], TupleShape((2), NoShape, NoShape), elements_use_flags={[const vector]{1, 1, 1}}"
        ),
        Some(Ty::Tuple(vec![
            Ty::Tensor(DType::F32, Shape::known(&[2])),
            Ty::None,
            Ty::Scalar(DType::Bool)
        ]))
    );
    assert_eq!(
        parse_abstract("Tuple[Tensor[Float32]*2], TupleShape((2), (2))"),
        Some(Ty::Tuple(vec![
            Ty::Tensor(DType::F32, Shape::known(&[2])),
            Ty::Tensor(DType::F32, Shape::known(&[2]))
        ]))
    );
}

#[test]
fn late_stage_forms() {
    // A parameter's type, a tensor printed over several lines, tuple attributes.
    assert_eq!(
        parse_abstract("Ref[Tensor[Float32]], (8), ref_key=bn.gamma, is_parameter"),
        Some(Ty::Tensor(DType::F32, Shape::known(&[8])))
    );
    let text = "  %1(a) = PrimFunc_Mul(Tensor(shape=[3, 1], dtype=Float32, value=\n[[ 1.0]\n [ 2.0]\n [ 3.0]]), %0) cnode_attrs: {}\n      : (<Tensor[Float32], (3, 1)>) -> (<Tensor[Float32], (3, 1)>)\n";
    let lines = logical_lines(text);
    assert_eq!(lines.len(), 5);
    assert!(lines[1].is_empty() && lines[3].is_empty());
    let n = parse_cnode(lines[0].trim()).unwrap();
    assert!(
        matches!(&n.args[0], PRef::Const(Const::Tensor(t)) if t.to_f64_vec() == vec![1.0, 2.0, 3.0])
    );
    let n = parse_cnode(
        "%1(o) = Conv2D(%para1_x, %0) {instance name: conv2d} primitive_attrs: {kernel_size: (3, 3), out_channel: I64(8)}",
    )
    .unwrap();
    assert!(matches!(&n.callee, PCallee::Prim(_, attrs)
        if attrs[0] == ("kernel_size".to_string(), Const::Tuple(vec![Const::Int(3, DType::I64), Const::Int(3, DType::I64)]))));
}

/// A partial application only ever called, its call passing the state
/// token (as MindSpore's `hyper_map` graphs read weights): the token is
/// implicit in the DSL, so neither the call nor the graph has it.
#[test]
fn state_token_through_a_called_partial() {
    const DUMP: &str = r#"# IR entry: @1_main_2
# Total subgraphs: 2

# Params:
%para1_x: <Tensor[Float32], (2)> : [2]
%para2_w: <Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>  :  has_default

subgraph @3_get_4(%para3_e, %para4_p, %para5_s) {
  %0(l) = Load(%para4_p, %para5_s)
  : (<Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (2)>)
  %1(a) = PrimFunc_Add(%0, %para3_e)
  : (<Tensor[Float32], (2)>, <Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%1)
  : (<Tensor[Float32], (2)>)
}

subgraph @1_main_2() {
  %0(p) = Partial(@3_get_4, %para1_x)
  : (<Func, NoShape>, <Tensor[Float32], (2)>) -> (<Func, NoShape>)
  %1(c) = %0(%para2_w, UMonad[U])
  : (<Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (2)>)
  Return(%1)
  : (<Tensor[Float32], (2)>)
}
"#;
    let text = import(DUMP, &WeightOptions::default()).unwrap().text;
    assert!(text.contains("  c = p(w)\n"), "{text}");
    assert!(text.contains("graph get(e, p) {"), "{text}");
}

/// Each node keeps its MindSpore scope in its name, as the `.mindir`
/// importer writes it: cells joined by `.`, the backward pass under `grad`.
#[test]
fn scopes_name_nodes() {
    const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]

subgraph @1_main_2() {
  %0(equiv_16_CNode_1) = PrimFunc_ReLU(%para1_x)
  : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  # Fullname with scope: (Default/network-WithLossCell/_backbone-ResNet/layer1-Block/relu-ReLU/ReLU-op3)
  # In file model.py:38, 4~9/    x = self.relu(x)/
  %1(h) = PrimFunc_Neg(%0)
  : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  # Fullname with scope: (Gradients/Default/network-WithLossCell/_backbone-ResNet/layer1-Block/relu-ReLU/Grad_ReLU/Neg-op1)
  %2(CNode_7) = PrimFunc_Abs(%1)
  : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  %3(CNode_8) = PrimFunc_Exp(%2)
  : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  # Scope: (Default/network-WithLossCell/_backbone-ResNet)
  Return(%3)
  : (<Tensor[Float32], (2)>)
  # Fullname with scope: (Default/network-WithLossCell/Return-op9)
}
"#;
    let text = import(DUMP, &WeightOptions::default()).unwrap().text;
    assert!(
        text.contains("network._backbone.layer1.relu.relu = ReLU(x)"),
        "{text}"
    );
    assert!(
        text.contains("grad.network._backbone.layer1.relu.Grad_ReLU.h = Neg(network._backbone.layer1.relu.relu)"),
        "{text}"
    );
    // A node without a scope line keeps its own name; the return's scope
    // is not taken for it.
    assert!(!text.contains("network.abs"), "{text}");
    // A kernel graph's `# Scope:` names the cells alone.
    assert!(text.contains("network._backbone.exp = Exp(%0)"), "{text}");
}

/// A kernel graph's constant inputs moved into attributes go back among
/// the inputs: by the printed `input_names`, else by MindSpore's names.
#[test]
fn inputs_moved_into_attributes() {
    let n = parse_cnode(
        "%1(c) = PrimFunc_Cast(%0) primitive_attrs: {output_names: (output), input_names: (x, dst_type), dst_type: F32}",
    )
    .unwrap();
    assert!(matches!(&n.args[1], PRef::Const(Const::Type(DType::F32))));
    let n = parse_cnode(
        "%1(c) = PrimFunc_Cast(%0) primitive_attrs: {is_backend_cast: Bool(0), dst_type: I64(43)}",
    )
    .unwrap();
    assert!(
        matches!(&n.args[1], PRef::Const(Const::Int(43, _))),
        "{n:?}"
    );
    // An attribute beside an input of the same name stays an attribute.
    let n = parse_cnode(
        "%2(g) = PrimFunc_Gather(%0, %1, I64(0), I64(0)) primitive_attrs: {batch_dims: I64(0)}",
    )
    .unwrap();
    assert_eq!(n.args.len(), 4);
}

/// A value no specialised graph reads (an optimizer's primitive passed
/// through `hyper_map`, `ValueProblem[PolyNode]`) reaches parameters that
/// are unused or only passed on: it is passed as `none`, not written.
#[test]
fn values_passed_only_to_unused_parameters() {
    const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]

subgraph @4_run_5(%para5_opt, %para6_v) {
  %0(r) = PrimFunc_Neg(%para6_v)
  : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%0)
}

subgraph @3_map_4(%para3_f, %para4_v) {
  %0(r) = call @4_run_5(ValueProblem[PolyNode], %para4_v)
  Return(%0)
}

subgraph @1_main_2() {
  %0(p) = Partial(@3_map_4, ApplyMomentum[use_nesterov: Bool(0)])
  %1(c) = %0(%para1_x)
  Return(%1)
}
"#;
    let text = import(DUMP, &WeightOptions::default()).unwrap().text;
    assert!(text.contains("Partial(map, none)"), "{text}");
    assert!(text.contains("run(none, v)"), "{text}");
}

/// An expanded op's attribute given as a graph input (MindSpore's
/// `SumExt` expansion: `ReduceSum(x, (), %keep_dims, false)`) makes an
/// opaque node with the dumped type and the reason beside it; a kernel
/// graph's function input declared without its name is the one its
/// call names.
#[test]
fn run_time_attributes_and_unnamed_function_inputs() {
    const DUMP: &str = r#"# IR entry: @_anonymous__510
# Params:
%para1_: <Tensor[Float32], (2, 4)> : [2, 4]
%para2_: <Bool, NoShape>

subgraph @_anonymous__510() {
  %0(CNode_507) = PrimFunc_ReduceSum(%para1_Parameter_508, (), %para2_Parameter_509, Bool(0))
  : (<Tensor[Float32], (2, 4)>, <Tuple[], TupleShape()>, <Bool, NoShape>, <Bool, NoShape>) -> (<Tensor[Float32], ()>)
  Return(%0)
}
"#;
    let text = import(DUMP, &WeightOptions::default()).unwrap().text;
    assert!(
        text.contains("%0: f32[] = Opaque(arg0, (), arg1, false, name=\"ReduceSum\")  # opaque_because: \"`keep_dims` is computed at run time\""),
        "{text}"
    );
    const CALL: &str = r#"# IR entry: @k
# Params:
%para1_: <Func, NoShape>
%para2_: <Tensor[Float32], ()>

subgraph @k() {
  %0(CNode_421) = Parameter_447[@FuncUnion(@a, @b)](%para2_Parameter_422)
  : (<Tensor[Float32], ()>) -> (<Tensor[Float32], ()>)
  Return(%0)
}
"#;
    let text = import(CALL, &WeightOptions::default()).unwrap().text;
    assert!(text.contains("%0 = arg0(arg1)"), "{text}");
}

/// An update mapped over weights (`hyper_map`) names each weight: the
/// graph applying it is copied per weight the calls pass, through a
/// tuple of weights and `TupleGetItem`.
#[test]
fn an_update_mapped_over_weights_names_each_weight() {
    const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_g: <Tensor[Float32], (2)> : [2]
%para2_w1: <Ref[Tensor[Float32]], (2), ref_key=w1, is_parameter>  :  has_default
%para3_w2: <Ref[Tensor[Float32]], (2), ref_key=w2, is_parameter>  :  has_default
%para4_lr: <Ref[Tensor[Float32]], (), ref_key=lr, is_parameter>  :  has_default

subgraph @5_opt_6(%para5_w, %para6_d) {
  %0(s) = Assign(%para5_w, %para6_d)
  : (<Ref[Tensor[Float32]], (2)>, <Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%0)
}

subgraph @3_map_4(%para7_ws, %para8_d) {
  %0(a) = TupleGetItem(%para7_ws, I64(0))
  %1(r1) = call @5_opt_6(%0, %para8_d)
  %2(b) = TupleGetItem(%para7_ws, I64(1))
  %3(r2) = call @5_opt_6(%2, %para8_d)
  %4(t) = MakeTuple(%1, %3)
  Return(%4)
}

subgraph @1_main_2() {
  %0(ws) = MakeTuple(%para2_w1, %para3_w2)
  %1(r) = call @3_map_4(%0, %para1_g)
  Return(%1)
}
"#;
    let text = import(DUMP, &WeightOptions::default()).unwrap().text;
    assert!(text.contains("Assign(w1, d)"), "{text}");
    assert!(text.contains("Assign(w2, d)"), "{text}");
}

#[test]
fn cnodes() {
    let n = parse_cnode(
        "%0(a) = PrimFunc_Sub(%para9_x, Tensor(shape=[], dtype=Float32, value=1)) primitive_attrs: {output_names: [output], side_effect_propagate: I64(1)}",
    )
    .unwrap();
    assert_eq!(n.label, "a");
    assert!(
        matches!(&n.callee, PCallee::Prim(name, attrs) if name == "PrimFunc_Sub" && attrs.len() == 1)
    );
    assert!(matches!(n.args[0], PRef::Para(9)));
    let n =
        parse_cnode("%5(CNode_131) = %4[@FuncUnion(@32_12_✓test_if_129, @33_15_✗test_if_130)]()")
            .unwrap();
    assert!(matches!(n.callee, PCallee::Value(PRef::Node(4))));
    assert!(n.args.is_empty());
    let n = parse_cnode("%0(CNode_53) = call @21_cast_54($(@18_tensor_bool_55:para6_x), Bool)")
        .unwrap();
    assert!(matches!(&n.callee, PCallee::Value(PRef::Graph(g)) if g == "21_cast_54"));
    assert!(matches!(&n.args[1], PRef::Const(Const::Type(DType::Bool))));
    let n = parse_cnode(
        "%9(CNode_302) = %8[@FuncUnion(@a, @b)](Tensor(shape=[2], dtype=Float32, value=[ 1.00000000e+00  1.00000000e+00]))",
    )
    .unwrap();
    assert!(
        matches!(&n.args[0], PRef::Const(Const::Tensor(t)) if t.to_f64_vec() == vec![1.0, 1.0])
    );
}
