//! Diagnostics: stable codes, a primary span, related spans with notes, and
//! quick-fix data where the fix is obvious.

use ir::TextRange;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// A text replacement that fixes a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fix {
    pub label: String,
    pub range: TextRange,
    pub replacement: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    /// Other places that explain this one (where a shape came from, the other branch).
    pub related: Vec<(TextRange, String)>,
    /// Facts without a place.
    pub notes: Vec<String>,
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn error(code: Code, range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            range,
            related: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
        }
    }

    pub fn with_related(mut self, range: TextRange, note: impl Into<String>) -> Diagnostic {
        self.related.push((range, note.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_fix(
        mut self,
        label: impl Into<String>,
        range: TextRange,
        replacement: impl Into<String>,
    ) -> Diagnostic {
        self.fixes.push(Fix {
            label: label.into(),
            range,
            replacement: replacement.into(),
        });
        self
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $severity:ident, $summary:literal;)*) => {
        /// Every diagnostic the checker reports, with a stable code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// One line on what the code means (SARIF rule descriptions).
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    Syntax = "E0001", Error, "syntax error";
    UndefinedName = "E0100", Error, "a name that is not defined";
    DuplicateName = "E0101", Error, "a name bound twice in one scope";
    UsedBeforeBound = "E0102", Error, "a name used before the statement that binds it";
    DuplicateItem = "E0103", Error, "two top-level items with one name";
    ImportNotFound = "E0104", Error, "an import of a file that is missing or cannot be read";
    ImportCycle = "E0105", Error, "files that import each other in a cycle";
    ImportClash = "E0106", Error, "an import that makes two items with one name visible";
    MissingReturn = "E0110", Error, "a graph without `return`";
    MisplacedReturn = "E0111", Error, "`return` that is not the last statement, or is repeated";
    UselessExpression = "E0112", Error, "an expression statement whose value is never used";
    MissingElse = "E0113", Error, "an `if` without `else`";
    UnknownType = "E0120", Error, "an unknown type name";
    BadWeight = "E0121", Error, "a weight whose type or initialiser is invalid";
    NotConstant = "E0130", Error, "a value that must be constant is not";
    BadTensorLiteral = "E0131", Error, "a tensor literal that is ragged or mixes kinds";
    UnknownPrimitive = "E0140", Error, "an unknown primitive";
    UnknownAttribute = "E0141", Error, "an argument that the primitive does not have";
    BadAttributeValue = "E0142", Error, "an attribute value of the wrong type or out of range";
    WrongArity = "E0143", Error, "a call with the wrong number of arguments";
    KeywordNotAllowed = "E0144", Error, "keyword arguments in a call of a graph";
    UnsupportedPrimitive = "E0145", Error, "a MindSpore 2.10 primitive that mirdsl does not support yet";
    NotCallable = "E0150", Error, "a call of a value that is not a function";
    NotAWeight = "E0160", Error, "an update or `Load` of something that is not a weight";
    DefaultParameter = "E0161", Error, "a parameter default outside a composite primitive definition";
    DTypeMismatch = "E0200", Error, "operands of incompatible dtypes";
    ShapeMismatch = "E0201", Error, "a shape rule of a primitive is violated";
    AnnotationMismatch = "E0210", Error, "a value that does not match its type annotation";
    ArgumentMismatch = "E0211", Error, "an argument that does not match the parameter's annotation";
    TupleIndex = "E0220", Error, "a tuple index out of range or not constant";
    NotATuple = "E0221", Error, "indexing or destructuring a value that is not a tuple";
    NonBoolCondition = "E0230", Error, "an `if` condition that is not a boolean";
    BranchMismatch = "E0231", Error, "`if` branches of different types";
    BadGradient = "E0240", Error, "a `grad`/`vjp`/`value_and_grad` that cannot be taken";
    Recursion = "E0250", Error, "a cycle that inference cannot resolve";
    UnusedBinding = "W0001", Warning, "a binding that is never used";
    UnreachableGraph = "W0002", Warning, "a nested graph that is never used";
}
