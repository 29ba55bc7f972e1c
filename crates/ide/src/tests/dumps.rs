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
