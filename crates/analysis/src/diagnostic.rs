//! Diagnostics: stable codes, a primary span, related spans with notes, and
//! quick-fix data where the fix is obvious.

use std::path::Path;
use std::sync::Arc;

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
    /// The replacement surrounds the text it replaces: its `$0` stands for
    /// that text (`Cast($0, f32)`), which the checker does not have.
    pub wraps: bool,
}

impl Fix {
    /// The text that replaces `range` in `source` (the file's text).
    pub fn new_text(&self, source: &str) -> String {
        if !self.wraps {
            return self.replacement.clone();
        }
        let old = source
            .get(usize::from(self.range.start())..usize::from(self.range.end()))
            .unwrap_or_default();
        self.replacement.replacen("$0", old, 1)
    }
}

/// Another place that explains a diagnostic: where a shape came from, the
/// other branch, the definition of a called graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Related {
    pub range: TextRange,
    pub message: String,
    /// The file the range is in, when it is not the diagnostic's own (an
    /// imported file); `None` for the diagnostic's own file.
    pub file: Option<Arc<Path>>,
}

impl Related {
    pub fn new(range: TextRange, message: impl Into<String>) -> Related {
        Related {
            range,
            message: message.into(),
            file: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    /// What the primary range is (`this is i32[4]`), shown under it.
    pub label: Option<String>,
    /// Other places that explain this one (where a shape came from, the other branch).
    pub related: Vec<Related>,
    /// Facts without a place.
    pub notes: Vec<String>,
    /// Advice without an edit (`help:` lines); advice with one is a [`Fix`].
    pub help: Vec<String>,
    pub fixes: Vec<Fix>,
    /// For an undefined name: the `import` item that would define it
    /// (`import "@std/nn/loss.mir"`). It goes at the top of the file, which
    /// the item-by-item checker does not see, so the IDE layer makes it a fix.
    pub missing_import: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            range,
            label: None,
            related: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
            fixes: Vec::new(),
            missing_import: None,
        }
    }

    /// The advice for [`Diagnostic::missing_import`].
    pub fn import_help(import: &str) -> String {
        format!("add `{import}` at the top of the file")
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// A syntax error; an unclosed bracket points at its opener.
    pub fn syntax(e: &syntax::SyntaxError) -> Diagnostic {
        let d = Diagnostic::error(Code::Syntax, e.range, e.message.clone());
        match &e.opener {
            Some((range, text)) => d.with_related(*range, format!("this `{text}` is never closed")),
            None => d,
        }
    }

    pub fn with_related(mut self, range: TextRange, note: impl Into<String>) -> Diagnostic {
        self.related.push(Related::new(range, note));
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
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
            wraps: false,
        });
        self
    }

    /// A fix that surrounds the text at `range`: `template`'s `$0` stands
    /// for it (see [`Fix::wraps`]).
    pub fn with_wrapping_fix(
        mut self,
        label: impl Into<String>,
        range: TextRange,
        template: impl Into<String>,
    ) -> Diagnostic {
        self.fixes.push(Fix {
            label: label.into(),
            range,
            replacement: template.into(),
            wraps: true,
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
    SizeOverflow = "E0202", Error, "a shape whose element count or byte size overflows a 64-bit integer";
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
    OverMemoryBudget = "W0003", Warning, "a tensor whose static size exceeds the memory budget of `mirdsl run`";
    IntegerGradient = "W0004", Warning, "a gradient with respect to an integer or boolean value, which is always zero";
}
