//! Every kind of token and node in a `.mir` syntax tree.

/// Token kinds come first, then node kinds; `__LAST` marks the end for the
/// `rowan` conversion.
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum SyntaxKind {
    // Trivia.
    WHITESPACE = 0,
    NEWLINE,
    COMMENT,
    // Literals and names.
    IDENT,
    TEMP,
    INT,
    FLOAT,
    STRING,
    // Keywords.
    GRAPH_KW,
    PARAM_KW,
    RETURN_KW,
    IF_KW,
    ELSE_KW,
    TRUE_KW,
    FALSE_KW,
    NONE_KW,
    FN_KW,
    AND_KW,
    OR_KW,
    NOT_KW,
    /// `import` (a keyword only where an item starts: the lexer keeps it an identifier).
    IMPORT_KW,
    /// `as`, after an import's path (contextual too).
    AS_KW,
    // Punctuation.
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    L_BRACE,
    R_BRACE,
    COMMA,
    SEMI,
    COLON,
    EQ,
    EQ2,
    NEQ,
    LT,
    LTEQ,
    GT,
    GTEQ,
    PLUS,
    MINUS,
    STAR,
    SLASH,
    AT,
    THIN_ARROW,
    FAT_ARROW,
    QUESTION,
    /// A character or sequence the lexer does not understand.
    ERROR_TOKEN,
    /// End of input; never stored in a tree.
    EOF,

    // Nodes.
    SOURCE_FILE,
    GRAPH,
    WEIGHT,
    PARAM_LIST,
    PARAM,
    RET_TYPE,
    BLOCK,
    LET_STMT,
    RETURN_STMT,
    EXPR_STMT,
    NAME,
    NAME_REF,
    TUPLE_PAT,
    NAMED_TYPE,
    SHAPE,
    DIM,
    TUPLE_TYPE,
    FN_TYPE,
    LITERAL,
    PAREN_EXPR,
    TUPLE_EXPR,
    TENSOR_EXPR,
    CALL_EXPR,
    ARG_LIST,
    KEYWORD_ARG,
    INDEX_EXPR,
    BIN_EXPR,
    PREFIX_EXPR,
    IF_EXPR,
    LAMBDA_EXPR,
    /// `import "PATH"` or `import "PATH" as NAME` (spec §10).
    IMPORT,
    /// Input the parser could not make sense of; parsing resumed after it.
    ERROR,
    #[doc(hidden)]
    __LAST,
}

use SyntaxKind::*;

impl SyntaxKind {
    pub fn is_trivia(self) -> bool {
        matches!(self, WHITESPACE | NEWLINE | COMMENT)
    }

    pub fn is_keyword(self) -> bool {
        (GRAPH_KW as u16..=AS_KW as u16).contains(&(self as u16))
    }

    pub fn is_token(self) -> bool {
        (self as u16) <= EOF as u16
    }

    /// The keyword spelled `text`, if any.
    pub fn from_keyword(text: &str) -> Option<SyntaxKind> {
        Some(match text {
            "graph" => GRAPH_KW,
            "param" => PARAM_KW,
            "return" => RETURN_KW,
            "if" => IF_KW,
            "else" => ELSE_KW,
            "true" => TRUE_KW,
            "false" => FALSE_KW,
            "none" => NONE_KW,
            "fn" => FN_KW,
            "and" => AND_KW,
            "or" => OR_KW,
            "not" => NOT_KW,
            _ => return None,
        })
    }

    /// Binding power of a binary operator (higher binds tighter), per spec §5.
    pub fn binary_precedence(self) -> Option<u8> {
        Some(match self {
            OR_KW => 1,
            AND_KW => 2,
            EQ2 | NEQ | LT | LTEQ | GT | GTEQ => 3,
            PLUS | MINUS => 4,
            STAR | SLASH | AT => 5,
            _ => return None,
        })
    }

    /// How the kind reads in an error message ("expected `)`").
    pub fn describe(self) -> &'static str {
        match self {
            WHITESPACE => "whitespace",
            NEWLINE => "end of line",
            COMMENT => "comment",
            IDENT => "identifier",
            TEMP => "temporary",
            INT => "integer",
            FLOAT => "float",
            STRING => "string",
            GRAPH_KW => "`graph`",
            PARAM_KW => "`param`",
            RETURN_KW => "`return`",
            IF_KW => "`if`",
            ELSE_KW => "`else`",
            TRUE_KW => "`true`",
            FALSE_KW => "`false`",
            NONE_KW => "`none`",
            FN_KW => "`fn`",
            AND_KW => "`and`",
            OR_KW => "`or`",
            NOT_KW => "`not`",
            IMPORT_KW => "`import`",
            AS_KW => "`as`",
            L_PAREN => "`(`",
            R_PAREN => "`)`",
            L_BRACK => "`[`",
            R_BRACK => "`]`",
            L_BRACE => "`{`",
            R_BRACE => "`}`",
            COMMA => "`,`",
            SEMI => "`;`",
            COLON => "`:`",
            EQ => "`=`",
            EQ2 => "`==`",
            NEQ => "`!=`",
            LT => "`<`",
            LTEQ => "`<=`",
            GT => "`>`",
            GTEQ => "`>=`",
            PLUS => "`+`",
            MINUS => "`-`",
            STAR => "`*`",
            SLASH => "`/`",
            AT => "`@`",
            THIN_ARROW => "`->`",
            FAT_ARROW => "`=>`",
            QUESTION => "`?`",
            ERROR_TOKEN => "invalid token",
            EOF => "end of file",
            _ => "syntax node",
        }
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// The `rowan` language tag of `.mir` trees.
#[derive(Debug, Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MirLanguage {}

impl rowan::Language for MirLanguage {
    type Kind = SyntaxKind;

    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        assert!(raw.0 < __LAST as u16);
        // SAFETY: `SyntaxKind` is `repr(u16)` and `raw.0` is in range (checked above).
        unsafe { std::mem::transmute::<u16, SyntaxKind>(raw.0) }
    }

    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}
