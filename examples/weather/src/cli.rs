//! The main example's command line.

/// What to run, as the command line says.
#[derive(Debug, Default, PartialEq)]
pub struct Args {
    /// `--model`: `PROVIDER/ID` from the registry, or with `--base-url` the server's id.
    pub model: Option<String>,
    /// `--base-url`: an OpenAI-compatible server.
    pub base_url: Option<String>,
    /// `--api`: the wire API, over the model's own.
    pub api: Option<String>,
    /// `--coach` / `--no-coach`: the small-model aids (default: on with `--base-url`).
    pub coach: Option<bool>,
    /// The words after the flags: a city, or (for a real model) a whole prompt.
    pub input: Vec<String>,
    /// `--help`.
    pub help: bool,
    /// `--mcp '[NAME=]PROGRAM ARGS...'`, repeatable: MCP servers whose tools the agent gets.
    pub mcp: Vec<McpArg>,
    /// `--mcp-sandbox ROOT`: every `--mcp` server runs in the kernel sandbox, writing only
    /// ROOT (and a private temporary directory), without network unless `--mcp-network`.
    pub mcp_sandbox: Option<String>,
    /// `--mcp-network`: the sandboxed `--mcp` servers may use the network.
    pub mcp_network: bool,
}

/// One `--mcp` server: a program and its arguments, split on whitespace (no shell).
#[derive(Debug, Clone, PartialEq)]
pub struct McpArg {
    /// The server's name in its tools' names (`mcp__NAME__tool`): `NAME=` if given, else
    /// the program's file name.
    pub name: String,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl McpArg {
    fn parse(spec: &str) -> Result<McpArg, String> {
        let (name, command) = match spec.split_once('=') {
            Some((name, command))
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                (Some(name.to_owned()), command)
            }
            _ => (None, spec),
        };
        let mut words = command.split_whitespace().map(str::to_owned);
        let Some(program) = words.next() else {
            return Err("--mcp needs a program, e.g. --mcp 'fs=npx -y @modelcontextprotocol/server-filesystem .'".to_owned());
        };
        let name = name.unwrap_or_else(|| {
            std::path::Path::new(&program)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| program.clone())
        });
        Ok(McpArg {
            name,
            program,
            args: words.collect(),
        })
    }
}

/// The usage text.
pub const USAGE: &str = "\
usage: weather-example [CITY]
       weather-example --model PROVIDER/ID [--api API] [--coach] [CITY | PROMPT...]
       weather-example --base-url URL --model ID [--api API] [--no-coach] [CITY | PROMPT...]
       weather-example --mcp '[NAME=]PROGRAM ARGS...' [--mcp ...] [--mcp-sandbox ROOT [--mcp-network]] TOOL [JSON]   (faux model)

Without --model the seed runs on the faux model: offline, no key, CITY defaults to Tokyo.

  --model PROVIDER/ID  a model of pi-ai's registry, e.g. anthropic/claude-sonnet-4-5
                       (key from ANTHROPIC_API_KEY) or openai/gpt-5-mini (OPENAI_API_KEY)
  --base-url URL       a model on an OpenAI-compatible server (llama.cpp, Ollama, vLLM),
                       e.g. http://127.0.0.1:18080/v1 with --model smol; the key is
                       OPENAI_API_KEY if set, else a placeholder
  --api API            the wire API: openai-completions (the default with --base-url),
                       openai-responses or anthropic-messages (whose base URL has no /v1)
  --coach, --no-coach  the aids a small model needs to call a tool (a directive system
                       prompt, one example exchange, a forced tool call while the user
                       has the last word, temperature 0); on by default with --base-url

  --mcp '[NAME=]PROGRAM ARGS...'
                       an MCP server started as a child (the words are the program and its
                       arguments; no shell), repeatable: the agent gets its tools, named
                       mcp__NAME__TOOL (NAME defaults to the program's file name). On the
                       faux model the words after the flags are a tool to call and its
                       JSON arguments (default {}); with --model they are the prompt.
  --mcp-sandbox ROOT   run every --mcp server in the kernel sandbox (Linux; docs/sandbox.md):
                       it writes only ROOT and a private temporary directory, reads only
                       those, the system's directories and its program's directory, has
                       no network, and nothing it starts outlives it
  --mcp-network        the sandboxed servers may use the network (TCP and UDP)

A single word is a city (\"What is the weather in CITY?\"); more words are the prompt.";

/// Reads the arguments after the program name. `Err` is the message for the user.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args::default();
    let mut args = args.into_iter();
    let mut only_words = false;
    while let Some(arg) = args.next() {
        if only_words || !arg.starts_with("--") {
            parsed.input.push(arg);
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg, None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--" => only_words = true,
            "--model" => parsed.model = Some(value("--model")?),
            "--base-url" => parsed.base_url = Some(value("--base-url")?),
            "--api" => parsed.api = Some(value("--api")?),
            "--coach" => parsed.coach = Some(true),
            "--no-coach" => parsed.coach = Some(false),
            "--help" => parsed.help = true,
            "--mcp" => parsed.mcp.push(McpArg::parse(&value("--mcp")?)?),
            "--mcp-sandbox" => parsed.mcp_sandbox = Some(value("--mcp-sandbox")?),
            "--mcp-network" => parsed.mcp_network = true,
            other => return Err(format!("unknown flag {other}\n\n{USAGE}")),
        }
    }
    if parsed.mcp_network && parsed.mcp_sandbox.is_none() {
        return Err("--mcp-network needs --mcp-sandbox ROOT".to_owned());
    }
    if parsed.model.is_none() && (parsed.base_url.is_some() || parsed.api.is_some()) {
        return Err("--base-url and --api need --model (the model id)".to_owned());
    }
    Ok(parsed)
}

/// The question for a real model: a single word is a city.
pub fn prompt(input: &[String]) -> String {
    match input {
        [] => "What is the weather in Tokyo?".to_owned(),
        [city] if !city.trim().contains(char::is_whitespace) => {
            format!("What is the weather in {}?", city.trim())
        }
        words => words.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Result<Args, String> {
        parse(line.iter().map(|s| s.to_string()))
    }

    #[test]
    fn no_flag_is_the_faux_model_with_an_optional_city() {
        assert_eq!(args(&[]).unwrap(), Args::default());
        assert_eq!(args(&["Paris"]).unwrap().input, ["Paris"]);
    }

    #[test]
    fn flags_take_a_value_inline_or_next() {
        let parsed = args(&[
            "--base-url",
            "http://127.0.0.1:18080/v1",
            "--model=smol",
            "--api",
            "openai-responses",
            "What is the weather in Tokyo?",
        ])
        .unwrap();
        assert_eq!(
            parsed.base_url.as_deref(),
            Some("http://127.0.0.1:18080/v1")
        );
        assert_eq!(parsed.model.as_deref(), Some("smol"));
        assert_eq!(parsed.api.as_deref(), Some("openai-responses"));
        assert_eq!(parsed.input, ["What is the weather in Tokyo?"]);
        assert_eq!(parsed.coach, None);
        assert_eq!(
            args(&["--model", "a/b", "--no-coach"]).unwrap().coach,
            Some(false)
        );
    }

    #[test]
    fn mistakes_are_messages() {
        assert_eq!(args(&["--model"]).unwrap_err(), "--model needs a value");
        assert!(
            args(&["--modle", "x"])
                .unwrap_err()
                .starts_with("unknown flag --modle")
        );
        assert!(args(&["--base-url", "http://x/v1"]).is_err());
        assert!(args(&["--help"]).unwrap().help);
    }

    #[test]
    fn mcp_servers_are_a_program_and_its_words() {
        let parsed = args(&[
            "--mcp",
            "fs=npx -y @modelcontextprotocol/server-filesystem /tmp",
            "--mcp=/usr/local/bin/weather-mcp",
            "mcp__fs__list_directory",
        ])
        .unwrap();
        assert_eq!(
            parsed.mcp,
            [
                McpArg {
                    name: "fs".into(),
                    program: "npx".into(),
                    args: vec![
                        "-y".into(),
                        "@modelcontextprotocol/server-filesystem".into(),
                        "/tmp".into()
                    ],
                },
                McpArg {
                    name: "weather-mcp".into(),
                    program: "/usr/local/bin/weather-mcp".into(),
                    args: vec![],
                },
            ]
        );
        assert!(args(&["--mcp", "  "]).is_err());
        let sandboxed = args(&["--mcp", "w", "--mcp-sandbox", "/srv/p", "--mcp-network"]).unwrap();
        assert_eq!(sandboxed.mcp_sandbox.as_deref(), Some("/srv/p"));
        assert!(sandboxed.mcp_network);
        assert!(args(&["--mcp", "w", "--mcp-network"]).is_err());
    }

    #[test]
    fn one_word_is_a_city_more_are_the_prompt() {
        assert_eq!(prompt(&[]), "What is the weather in Tokyo?");
        assert_eq!(prompt(&["Paris".into()]), "What is the weather in Paris?");
        assert_eq!(prompt(&["How warm is Paris?".into()]), "How warm is Paris?");
        assert_eq!(
            prompt(&["How".into(), "warm".into(), "is".into(), "Paris?".into()]),
            "How warm is Paris?"
        );
    }
}
