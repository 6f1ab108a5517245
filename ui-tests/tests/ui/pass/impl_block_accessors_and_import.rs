//! A `#[pi_tools]` block whose methods have no `pub`: the accessors and tool structs are
//! `pub` (as `tools()` is), so code outside the module (and tests in `tests/`) reaches
//! them; a `pub(crate)` method keeps its tool inside the crate. The `pi_tool` import that
//! only the block's methods name counts as used.
#![deny(unused_imports, private_interfaces)]

mod notes {
    use std::sync::Mutex;

    use pi_tool::{ToolError, pi_tool, pi_tools};

    #[derive(Default)]
    pub struct Notebook {
        notes: Mutex<Vec<String>>,
    }

    #[pi_tool::params]
    pub struct AppendParams {
        /// The line to add.
        pub line: String,
    }

    #[pi_tools]
    impl Notebook {
        /// Add a line to the notebook.
        #[pi_tool(name = "append_note")]
        async fn append_note(&self, params: AppendParams) -> Result<String, ToolError> {
            let mut notes = self.notes.lock().map_err(|_| ToolError::new("broken"))?;
            notes.push(params.line);
            Ok(format!("{} notes", notes.len()))
        }

        /// Count the notes.
        #[pi_tool]
        pub(crate) async fn count_notes(&self) -> Result<String, ToolError> {
            let notes = self.notes.lock().map_err(|_| ToolError::new("broken"))?;
            Ok(notes.len().to_string())
        }
    }
}

/// A private state type: its tools are as reachable as it is, with no warning.
struct Hidden;

#[pi_tool::pi_tools]
impl Hidden {
    /// Say hi.
    #[pi_tool]
    async fn hi(&self) -> Result<String, pi_tool::ToolError> {
        Ok("hi".to_owned())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    use std::sync::Arc;

    use pi_tool::{Tool, json, testing};

    let notebook = Arc::new(notes::Notebook::default());
    let tool: notes::AppendNoteTool = notebook.append_note_tool();
    assert_eq!(notes::AppendNoteTool::NAME, "append_note");
    let run = testing::call_json(tool, json!({"line": "one"})).await;
    assert_eq!(run.text(), "1 notes");
    let run = testing::call_json(notebook.count_notes_tool(), json!({})).await;
    assert_eq!(run.text(), "1");
    let _ = Arc::new(Hidden).hi_tool();
}
