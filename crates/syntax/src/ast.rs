//! The typed AST: thin wrappers over syntax nodes, with accessors that return
//! `None` where the source is incomplete.

use crate::{SyntaxKind, SyntaxKind::*, SyntaxNode, SyntaxNodeChildren, SyntaxToken, TextRange};

pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(node: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
    fn range(&self) -> TextRange {
        self.syntax().text_range()
    }
}

/// Iterates over the children of a node that are `N`.
pub struct AstChildren<N> {
    inner: SyntaxNodeChildren,
    _marker: std::marker::PhantomData<N>,
}

impl<N: AstNode> Iterator for AstChildren<N> {
    type Item = N;
    fn next(&mut self) -> Option<N> {
        self.inner.by_ref().find_map(N::cast)
    }
}

fn children<N: AstNode>(node: &SyntaxNode) -> AstChildren<N> {
    AstChildren {
        inner: node.children(),
        _marker: std::marker::PhantomData,
    }
}

fn child<N: AstNode>(node: &SyntaxNode) -> Option<N> {
    node.children().find_map(N::cast)
}

fn token(node: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    node.children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == kind)
}

macro_rules! ast_node {
    ($(#[$meta:meta])* $name:ident = $kind:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name(SyntaxNode);

        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                kind == $kind
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                Self::can_cast(node.kind()).then(|| $name(node))
            }
            fn syntax(&self) -> &SyntaxNode {
                &self.0
            }
        }
    };
}

macro_rules! ast_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident($node:ident) = $kind:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant($node),)*
        }

        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                matches!(kind, $($kind)|*)
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                Some(match node.kind() {
                    $($kind => $name::$variant($node(node)),)*
                    _ => return None,
                })
            }
            fn syntax(&self) -> &SyntaxNode {
                match self {
                    $($name::$variant(it) => &it.0,)*
                }
            }
        }
    };
}

ast_node!(SourceFile = SOURCE_FILE);
ast_node!(
    /// `graph NAME(PARAMS) -> TYPE { BODY }`
    Graph = GRAPH
);
ast_node!(
    /// `param NAME: TYPE = INIT`, a weight.
    Weight = WEIGHT
);
ast_node!(
    /// `import "PATH"` or `import "PATH" as NAME` (spec §10).
    Import = IMPORT
);
ast_node!(ParamList = PARAM_LIST);
ast_node!(Param = PARAM);
ast_node!(RetType = RET_TYPE);
ast_node!(Block = BLOCK);
ast_node!(LetStmt = LET_STMT);
ast_node!(ReturnStmt = RETURN_STMT);
ast_node!(ExprStmt = EXPR_STMT);
ast_node!(
    /// A name being bound (graph, weight, parameter, binding, keyword).
    Name = NAME
);
ast_node!(
    /// A use of a name.
    NameRef = NAME_REF
);
ast_node!(TuplePat = TUPLE_PAT);
ast_node!(NamedType = NAMED_TYPE);
ast_node!(Shape = SHAPE);
ast_node!(Dim = DIM);
ast_node!(TupleType = TUPLE_TYPE);
ast_node!(FnType = FN_TYPE);
ast_node!(Literal = LITERAL);
ast_node!(ParenExpr = PAREN_EXPR);
ast_node!(TupleExpr = TUPLE_EXPR);
ast_node!(TensorExpr = TENSOR_EXPR);
ast_node!(CallExpr = CALL_EXPR);
ast_node!(ArgList = ARG_LIST);
ast_node!(KeywordArg = KEYWORD_ARG);
ast_node!(IndexExpr = INDEX_EXPR);
ast_node!(BinExpr = BIN_EXPR);
ast_node!(PrefixExpr = PREFIX_EXPR);
ast_node!(IfExpr = IF_EXPR);
ast_node!(LambdaExpr = LAMBDA_EXPR);

ast_enum!(Item {
    Graph(Graph) = GRAPH,
    Weight(Weight) = WEIGHT,
});

ast_enum!(Stmt {
    Let(LetStmt) = LET_STMT,
    Return(ReturnStmt) = RETURN_STMT,
    Expr(ExprStmt) = EXPR_STMT,
    Graph(Graph) = GRAPH,
});

ast_enum!(Pat {
    Name(Name) = NAME,
    Tuple(TuplePat) = TUPLE_PAT,
});

ast_enum!(Type {
    Named(NamedType) = NAMED_TYPE,
    Tuple(TupleType) = TUPLE_TYPE,
    Fn(FnType) = FN_TYPE,
});

ast_enum!(Expr {
    Literal(Literal) = LITERAL,
    NameRef(NameRef) = NAME_REF,
    Paren(ParenExpr) = PAREN_EXPR,
    Tuple(TupleExpr) = TUPLE_EXPR,
    Tensor(TensorExpr) = TENSOR_EXPR,
    Call(CallExpr) = CALL_EXPR,
    Index(IndexExpr) = INDEX_EXPR,
    Bin(BinExpr) = BIN_EXPR,
    Prefix(PrefixExpr) = PREFIX_EXPR,
    If(IfExpr) = IF_EXPR,
    Lambda(LambdaExpr) = LAMBDA_EXPR,
});

ast_enum!(
    /// An argument of a call: positional or `key=value`.
    Arg {
        Keyword(KeywordArg) = KEYWORD_ARG,
        Literal(Literal) = LITERAL,
        NameRef(NameRef) = NAME_REF,
        Paren(ParenExpr) = PAREN_EXPR,
        Tuple(TupleExpr) = TUPLE_EXPR,
        Tensor(TensorExpr) = TENSOR_EXPR,
        Call(CallExpr) = CALL_EXPR,
        Index(IndexExpr) = INDEX_EXPR,
        Bin(BinExpr) = BIN_EXPR,
        Prefix(PrefixExpr) = PREFIX_EXPR,
        If(IfExpr) = IF_EXPR,
        Lambda(LambdaExpr) = LAMBDA_EXPR,
    }
);

impl SourceFile {
    pub fn items(&self) -> AstChildren<Item> {
        children(&self.0)
    }
    pub fn graphs(&self) -> impl Iterator<Item = Graph> {
        children(&self.0)
    }
    pub fn weights(&self) -> impl Iterator<Item = Weight> {
        children(&self.0)
    }
}

impl SourceFile {
    /// The file's `import` items, in source order.
    pub fn imports(&self) -> AstChildren<Import> {
        children(&self.0)
    }
}

impl Import {
    /// The string token of the path, quotes included.
    pub fn path_token(&self) -> Option<SyntaxToken> {
        token(&self.0, STRING)
    }

    /// The path, unquoted and unescaped.
    pub fn path(&self) -> Option<String> {
        let t = self.path_token()?;
        let text = t.text();
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(c) => out.push(c),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// The name after `as`, if any.
    pub fn alias(&self) -> Option<Name> {
        child(&self.0)
    }
}

impl Item {
    pub fn name(&self) -> Option<Name> {
        match self {
            Item::Graph(g) => g.name(),
            Item::Weight(w) => w.name(),
        }
    }
}

impl Graph {
    pub fn name(&self) -> Option<Name> {
        child(&self.0)
    }
    pub fn param_list(&self) -> Option<ParamList> {
        child(&self.0)
    }
    pub fn params(&self) -> impl Iterator<Item = Param> {
        self.param_list().into_iter().flat_map(|l| l.params())
    }
    pub fn ret_type(&self) -> Option<Type> {
        child::<RetType>(&self.0).and_then(|r| r.ty())
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.0)
    }
}

impl Weight {
    pub fn name(&self) -> Option<Name> {
        child(&self.0)
    }
    pub fn ty(&self) -> Option<Type> {
        child(&self.0)
    }
    pub fn init(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl ParamList {
    pub fn params(&self) -> AstChildren<Param> {
        children(&self.0)
    }
    /// The parameter types of an `fn(...) -> T` type.
    pub fn types(&self) -> AstChildren<Type> {
        children(&self.0)
    }
}

impl Param {
    pub fn name(&self) -> Option<Name> {
        child(&self.0)
    }
    pub fn ty(&self) -> Option<Type> {
        child(&self.0)
    }
    /// `= VALUE`: the default of an attribute parameter.
    pub fn default_value(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl RetType {
    pub fn ty(&self) -> Option<Type> {
        child(&self.0)
    }
}

impl Block {
    pub fn stmts(&self) -> AstChildren<Stmt> {
        children(&self.0)
    }
    /// The value of an `if` branch: its last statement, when it is an expression.
    pub fn tail_expr(&self) -> Option<Expr> {
        match self.stmts().last()? {
            Stmt::Expr(e) => e.expr(),
            _ => None,
        }
    }
    pub fn l_brace(&self) -> Option<SyntaxToken> {
        token(&self.0, L_BRACE)
    }
    pub fn r_brace(&self) -> Option<SyntaxToken> {
        token(&self.0, R_BRACE)
    }
}

impl LetStmt {
    pub fn pat(&self) -> Option<Pat> {
        child(&self.0)
    }
    pub fn ty(&self) -> Option<Type> {
        child(&self.0)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl ReturnStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl ExprStmt {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl Name {
    pub fn token(&self) -> Option<SyntaxToken> {
        self.0.first_token()
    }
    pub fn text(&self) -> String {
        self.token()
            .map(|t| t.text().to_string())
            .unwrap_or_default()
    }
}

impl NameRef {
    pub fn token(&self) -> Option<SyntaxToken> {
        self.0.first_token()
    }
    pub fn text(&self) -> String {
        self.token()
            .map(|t| t.text().to_string())
            .unwrap_or_default()
    }
}

impl TuplePat {
    pub fn fields(&self) -> AstChildren<Pat> {
        children(&self.0)
    }
}

impl NamedType {
    /// `f32`, `str`, `none`, ...
    pub fn name_token(&self) -> Option<SyntaxToken> {
        self.0.first_token()
    }
    pub fn shape(&self) -> Option<Shape> {
        child(&self.0)
    }
}

impl Shape {
    pub fn dims(&self) -> AstChildren<Dim> {
        children(&self.0)
    }
}

impl Dim {
    pub fn token(&self) -> Option<SyntaxToken> {
        self.0.first_token()
    }
}

impl TupleType {
    pub fn fields(&self) -> AstChildren<Type> {
        children(&self.0)
    }
}

impl FnType {
    pub fn params(&self) -> impl Iterator<Item = Type> {
        child::<ParamList>(&self.0)
            .into_iter()
            .flat_map(|l| l.types())
    }
    pub fn ret(&self) -> Option<Type> {
        child(&self.0)
    }
}

/// The value of a literal token.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteralKind {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    /// An integer too large for `i64`.
    IntOverflow,
}

impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        self.0.first_token()
    }
    pub fn kind(&self) -> Option<LiteralKind> {
        let token = self.token()?;
        Some(match token.kind() {
            INT => token
                .text()
                .parse()
                .map_or(LiteralKind::IntOverflow, LiteralKind::Int),
            FLOAT => LiteralKind::Float(token.text().parse().ok()?),
            STRING => LiteralKind::Str(crate::unescape_string(token.text())),
            TRUE_KW => LiteralKind::Bool(true),
            FALSE_KW => LiteralKind::Bool(false),
            NONE_KW => LiteralKind::None,
            _ => return None,
        })
    }
}

impl ParenExpr {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl TupleExpr {
    pub fn fields(&self) -> AstChildren<Expr> {
        children(&self.0)
    }
}

impl TensorExpr {
    pub fn elements(&self) -> AstChildren<Expr> {
        children(&self.0)
    }
}

impl CallExpr {
    pub fn callee(&self) -> Option<Expr> {
        child(&self.0)
    }
    pub fn arg_list(&self) -> Option<ArgList> {
        child(&self.0)
    }
    pub fn args(&self) -> impl Iterator<Item = Arg> {
        self.arg_list().into_iter().flat_map(|l| l.args())
    }
}

impl ArgList {
    pub fn args(&self) -> AstChildren<Arg> {
        children(&self.0)
    }
}

impl Arg {
    /// The argument's value expression (for `key=value`, the value).
    pub fn value(&self) -> Option<Expr> {
        match self {
            Arg::Keyword(k) => k.value(),
            other => Expr::cast(other.syntax().clone()),
        }
    }
}

impl KeywordArg {
    pub fn name(&self) -> Option<Name> {
        child(&self.0)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.0)
    }
}

impl IndexExpr {
    pub fn base(&self) -> Option<Expr> {
        children(&self.0).next()
    }
    pub fn index(&self) -> Option<Expr> {
        children(&self.0).nth(1)
    }
}

impl BinExpr {
    pub fn lhs(&self) -> Option<Expr> {
        children(&self.0).next()
    }
    pub fn rhs(&self) -> Option<Expr> {
        children(&self.0).nth(1)
    }
    pub fn op_token(&self) -> Option<SyntaxToken> {
        self.0
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| t.kind().binary_precedence().is_some())
    }
    pub fn op_kind(&self) -> Option<SyntaxKind> {
        self.op_token().map(|t| t.kind())
    }
}

impl PrefixExpr {
    pub fn operand(&self) -> Option<Expr> {
        child(&self.0)
    }
    pub fn op_kind(&self) -> Option<SyntaxKind> {
        self.0.first_token().map(|t| t.kind())
    }
}

impl IfExpr {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.0)
    }
    pub fn then_block(&self) -> Option<Block> {
        children(&self.0).next()
    }
    /// The `else` part: a block, or another `if` for `else if`.
    pub fn else_branch(&self) -> Option<ElseBranch> {
        let mut after_else = false;
        for element in self.0.children_with_tokens() {
            match element {
                rowan::NodeOrToken::Token(t) if t.kind() == ELSE_KW => after_else = true,
                rowan::NodeOrToken::Node(n) if after_else => {
                    return match n.kind() {
                        BLOCK => Some(ElseBranch::Block(Block(n))),
                        IF_EXPR => Some(ElseBranch::If(IfExpr(n))),
                        _ => None,
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ElseBranch {
    Block(Block),
    If(IfExpr),
}

impl LambdaExpr {
    pub fn param_list(&self) -> Option<ParamList> {
        child(&self.0)
    }
    pub fn params(&self) -> impl Iterator<Item = Param> {
        self.param_list().into_iter().flat_map(|l| l.params())
    }
    pub fn body(&self) -> Option<Expr> {
        child(&self.0)
    }
}
