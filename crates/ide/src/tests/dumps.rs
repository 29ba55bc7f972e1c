//! Compile dumps (`ide::dump`): semantic tokens in a range, the node under
//! any part of its statement, the user's frame found for a moved folder.

use std::path::{Path, PathBuf};

use syntax::{TextRange, TextSize};

use crate::dump::{dump_hover, dump_tokens, dump_user_frame, node_at, parse_dump};
use crate::TokenKind;

const DUMP: &str = "# IR entry: @1_main_2
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]
%para2_w: <Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>  :  has_default

subgraph @1_main_2() {
  %0(CNode_1) = PrimFunc_Mul(%para1_x, %para2_w)
      : (<Tensor[Float32], (2)>, <Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
      # Fullname with scope: (Default/Mul-op0)
      # In file /gone/machine/my model.py:7, 8~20/        return x * self.w/
  Return(%0)
}
";

fn at(needle: &str) -> TextSize {
    TextSize::from(DUMP.find(needle).unwrap() as u32)
}

#[test]
fn tokens_in_a_range_are_the_names_and_primitives_there() {
    let d = parse_dump(DUMP);
    let line = DUMP.find("  %0(CNode_1)").unwrap();
    let end = line + DUMP[line..].find('\n').unwrap();
    let range = TextRange::new(TextSize::from(line as u32), TextSize::from(end as u32));
    let got: Vec<(&str, TokenKind, u32)> = dump_tokens(&d, Some(range))
        .iter()
        .map(|t| (&DUMP[t.range], t.kind, t.modifiers))
        .collect();
    assert_eq!(
        got,
        [
            ("%0", TokenKind::Variable, 1),
            ("PrimFunc_Mul", TokenKind::Function, 4),
            ("%para1_x", TokenKind::Parameter, 0),
            ("%para2_w", TokenKind::Variable, 2),
        ]
    );
    // In order over the whole dump, never overlapping.
    let all = dump_tokens(&d, None);
    assert!(all
        .windows(2)
        .all(|w| w[0].range.end() <= w[1].range.start()));
}

#[test]
fn the_node_under_any_part_of_its_statement() {
    let d = parse_dump(DUMP);
    for needle in [
        "%0(CNode_1)",
        "PrimFunc_Mul",
        "-> (<Tensor",
        "Default/Mul-op0",
        "my model.py",
    ] {
        assert_eq!(
            node_at(&d, at(needle) + TextSize::from(1)),
            Some((0, 0)),
            "{needle}"
        );
    }
    assert_eq!(
        node_at(&d, at("Return(%0)") + TextSize::from(2)),
        Some((0, 1))
    );
    assert_eq!(node_at(&d, at("%para1_x:")), None);
}

#[test]
fn the_users_frame_of_a_moved_folder_is_found_next_to_it() {
    let d = parse_dump(DUMP);
    let dir = Path::new("/home/me/run/dump");
    let offset = at("Default/Mul-op0");
    // The path as printed does not exist; the script next to the dump folder does.
    let beside = PathBuf::from("/home/me/run/my model.py");
    let exists = |p: &Path| p == beside;
    assert_eq!(
        dump_user_frame(&d, offset, Some(dir), &exists),
        Some((beside.clone(), 7))
    );
    let h = dump_hover(
        &d,
        at("PrimFunc_Mul") + TextSize::from(3),
        Some(dir),
        &exists,
    )
    .unwrap();
    assert!(
        h.markdown
            .contains("[my model.py:7](file:///home/me/run/my%20model.py#L7)"),
        "{}",
        h.markdown
    );
    // Nothing found anywhere: the path as printed.
    assert_eq!(
        dump_user_frame(&d, offset, Some(dir), &|_| false),
        Some((PathBuf::from("/gone/machine/my model.py"), 7))
    );
}

/// A runtime actor set (testdata/irdumps/actors, MindSpore 2.10's, of
/// gen_dumps.py's `tiny_step`) in both its forms: the outline lists its
/// sections (or blocks) and their actors, a mention of an actor goes to its
/// definition, and hover says what the actor is, its kernel's primitive and
/// MindSpore's schema of it, and where each input comes from.
#[test]
fn actor_sets_have_an_outline_definitions_references_and_hover() {
    use crate::dump::{dump_definition, dump_folds, dump_references, dump_symbols};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/irdumps/actors");
    // The detailed form.
    let text = std::fs::read_to_string(dir.join("0_actor_set_pipeline_kernel_graph_0.ir")).unwrap();
    let d = parse_dump(&text);
    let syms = dump_symbols(&d);
    let kernels = syms.iter().find(|s| s.name == "Kernel actors").unwrap();
    assert_eq!(kernels.children.len(), 20, "{kernels:?}");
    assert_eq!(
        kernels.children[0].name,
        "0_Default/network-WithLossCell/_backbone-Tiny/conv-Conv2d/Conv2D-op0"
    );
    assert_eq!(kernels.children[0].detail.as_deref(), Some("kernel Conv2D"));
    let conv = "0_Default/network-WithLossCell/_backbone-Tiny/conv-Conv2d/Conv2D-op0";
    let mention = text.find(&format!("to_actor_name:{conv}")).unwrap() + "to_actor_name:".len() + 3;
    let def = dump_definition(&d, TextSize::from(mention as u32)).unwrap();
    assert_eq!(&text[def], conv);
    assert!(text[..usize::from(def.start())].ends_with("\tactor_name:"));
    let refs = dump_references(&d, def.start(), false);
    assert!(refs.len() >= 3, "{refs:?}");
    assert!(refs.iter().all(|r| &text[*r] == conv));
    let h = dump_hover(&d, TextSize::from(mention as u32), None, &|_| false).unwrap();
    assert!(
        h.markdown
            .contains(&format!("**{conv}**: kernel actor in `Kernel actors`")),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown.contains("(primitive `Conv2D`)"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown
            .contains("- 0: output 0 of `kernel_graph_0_HostDSActor`"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown.contains("- 1: weight `conv.weight`"),
        "{}",
        h.markdown
    );
    assert!(h.markdown.contains("MindSpore"), "{}", h.markdown);
    assert!(!dump_folds(&text, &d).is_empty());
    // The final form: ids, types.
    let text = std::fs::read_to_string(dir.join("final_actor_set_kernel_graph_0.ir")).unwrap();
    let d = parse_dump(&text);
    let use_at = text.find("ReLU-op0(%2[0])").unwrap() + "ReLU-op0(".len() + 1;
    let def = dump_definition(&d, TextSize::from(use_at as u32)).unwrap();
    assert_eq!(&text[def], "%2");
    assert!(text[usize::from(def.end())..].starts_with(" = kernel_graph0:Conv2D-op0("));
    let h = dump_hover(&d, TextSize::from(use_at as u32), None, &|_| false).unwrap();
    assert!(
        h.markdown
            .contains("kernel: `kernel_graph0:Conv2D-op0` (primitive `Conv2D`)"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown
            .contains("type: `<Tensor[Float32]> <Ref[Tensor[Float32]]> -> <Tensor[Float32]>`"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown.contains("- 1: weight `conv.weight`"),
        "{}",
        h.markdown
    );
    let syms = dump_symbols(&d);
    assert_eq!(syms.len(), 1);
    assert!(syms[0].children.iter().any(
        |s| s.name == "%2 0_Default/network-WithLossCell/_backbone-Tiny/conv-Conv2d/Conv2D-op0"
    ));
}

/// An actor's kernel is found in its kernel graph's dump beside the set
/// (`graph_build_0_*`, the node of the kernel's scope), in both forms.
#[test]
fn an_actor_links_to_its_kernel_in_the_kernel_graph() {
    use crate::dump::{dump_actor_kernel_link, stages};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/irdumps/actors");
    let files = stages::stages(&dir).unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let build = std::fs::read_to_string(dir.join("graph_build_0_0126.ir")).unwrap();
    let scope = "# Fullname with scope: (Default/network-WithLossCell/_backbone-Tiny/conv-Conv2d/Conv2D-op0)";
    let above = &build[..build.find(scope).unwrap()];
    let lines: Vec<&str> = above.lines().collect();
    let stmt = lines.iter().rposition(|l| l.starts_with("  %")).unwrap() + 1;
    assert!(build.lines().nth(stmt - 1).unwrap().contains("Conv2D("));
    let want = format!("[graph_build_0_0126.ir:{stmt}](file://");
    for (file, needle) in [
        (
            "0_actor_set_pipeline_kernel_graph_0.ir",
            "actor_name:0_Default",
        ),
        (
            "final_actor_set_kernel_graph_0.ir",
            "%2 = kernel_graph0:Conv2D",
        ),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let d = parse_dump(&text);
        let at = text.find(needle).unwrap() + needle.find(['0', '%']).unwrap();
        let link = dump_actor_kernel_link(&d, TextSize::from(at as u32), &files, &read)
            .unwrap_or_else(|| panic!("{file}: no link"));
        assert!(link.starts_with(&want), "{file}: {link}");
        assert!(link.ends_with(&format!("#L{stmt})")), "{file}: {link}");
    }
}
