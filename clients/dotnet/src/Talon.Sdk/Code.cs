using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Code: code run in contexts, kernels inside the sandbox (Python in
    /// ipykernel, JavaScript in Node, Bash) that keep their state between
    /// runs, as a notebook does. RunAsync without a context uses the
    /// sandbox's default context of its language, made on first use. The
    /// Python SDK's sbx.code (the REST API's CodeService).
    /// </summary>
    public sealed class Code
    {
        // A kernel may take a while to start (ipykernel imports): Python's
        // SDK gives create and restart 90 s, the request timeout plus this.
        static readonly TimeSpan KernelStart = TimeSpan.FromSeconds(30);

        readonly Sandbox _s;

        internal Code(Sandbox sandbox)
        {
            _s = sandbox;
        }

        /// <summary>
        /// Runs code in options.ContextId, or in the default context of
        /// options.Language (Python when neither is set), and returns once
        /// the run completes, calling the callbacks as its output arrives
        /// (on the reading thread). An error the code raises is
        /// Execution.Error, not an exception: exceptions are the call's own
        /// failures (NotFoundException for a context that is gone). The
        /// server interrupts the run after options.Timeout (5 minutes unless
        /// set). The call itself is not bound by the request timeout, as in
        /// the Python SDK: the first run of a language may wait for its
        /// default context's kernel to start, and a run may be silent for
        /// as long as it likes; your CancellationToken bounds it. Cancelling
        /// stops following the run; the kernel finishes it (InterruptAsync
        /// stops it).
        /// </summary>
        public async Task<Execution> RunAsync(string code, RunCodeOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            if (code == null)
                throw new InvalidArgumentException("code is required (\"\" runs nothing)");
            var o = options ?? new RunCodeOptions();
            var content = new StringContent(Wire.Json(CodeWire.RunBody(code, o)), new UTF8Encoding(false), "application/json");
            var f = new CodeFollower(o.OnStdout, o.OnStderr, o.OnResult, o.OnError);
            using (var resp = await _s.Conn.SendAsync(HttpMethod.Post, Wire.SandboxPath(_s.SandboxId, "/code:run"), content,
                cancellationToken, stream: true, accept: "application/x-ndjson", unlimited: true).ConfigureAwait(false))
                await Ndjson.ReadAsync(resp, line =>
                {
                    f.Add(line);
                    return Done;
                }, cancellationToken).ConfigureAwait(false);
            return f.Result();
        }

        /// <summary>
        /// Starts a context of language ("python", "javascript" or "js",
        /// "bash"; see CodeLanguage) in cwd (/workspace when unset; it must
        /// exist) with envs over the sandbox's environment, and returns once
        /// its kernel answers. A sandbox holds at most 16 contexts (one more
        /// is RateLimitException); an unknown language is
        /// InvalidArgumentException before anything is sent.
        /// </summary>
        public async Task<CodeContext> CreateContextAsync(string language = CodeLanguage.Python, string cwd = null,
            IDictionary<string, string> envs = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = CodeWire.ContextBody(language, cwd, envs);
            var r = await _s.Conn.Call(ct => _s.Conn.Code.CodeServiceCreateCodeContextAsync(_s.SandboxId, body, ct),
                cancellationToken, KernelStart).ConfigureAwait(false);
            return CodeContext.Of(r == null ? null : r.Context);
        }

        /// <summary>The sandbox's contexts (the default ones made by RunAsync included).</summary>
        public async Task<IReadOnlyList<CodeContext>> ListContextsAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await _s.Conn.Call(ct => _s.Conn.Code.CodeServiceListCodeContextsAsync(_s.SandboxId, ct), cancellationToken)
                .ConfigureAwait(false);
            var list = new List<CodeContext>();
            if (r != null && r.Contexts != null)
                foreach (var c in r.Contexts)
                    list.Add(CodeContext.Of(c));
            return list;
        }

        /// <summary>
        /// A fresh kernel under the same id: its state is gone and its
        /// execution count is back at 0; a run in it ends with a KernelDied
        /// error. Returns once the new kernel answers.
        /// </summary>
        public async Task<CodeContext> RestartContextAsync(string contextId, CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(contextId, "a context id");
            var r = await _s.Conn.Call(ct => _s.Conn.Code.CodeServiceRestartCodeContextAsync(_s.SandboxId, id,
                new M.RestartCodeContextRequest(), ct), cancellationToken, KernelStart).ConfigureAwait(false);
            return CodeContext.Of(r == null ? null : r.Context);
        }

        public Task<CodeContext> RestartContextAsync(CodeContext context, CancellationToken cancellationToken = default(CancellationToken)) =>
            RestartContextAsync(Id(context), cancellationToken);

        /// <summary>
        /// Interrupts the context's run and keeps its state: Python raises
        /// KeyboardInterrupt, Node's script stops with an error, Bash
        /// abandons the command line. The run then completes with
        /// Execution.Interrupted set. A run still going 3 s later (code that
        /// catches the interrupt) has its kernel killed.
        /// </summary>
        public Task InterruptAsync(string contextId, CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(contextId, "a context id");
            return _s.Conn.Run(ct => _s.Conn.Code.CodeServiceInterruptCodeContextAsync(_s.SandboxId, id,
                new M.InterruptCodeContextRequest(), ct), cancellationToken);
        }

        public Task InterruptAsync(CodeContext context, CancellationToken cancellationToken = default(CancellationToken)) =>
            InterruptAsync(Id(context), cancellationToken);

        /// <summary>Kills the context's kernel and forgets it; NotFoundException when there is no such context.</summary>
        public Task DeleteContextAsync(string contextId, CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(contextId, "a context id");
            return _s.Conn.Run(ct => _s.Conn.Code.CodeServiceDeleteCodeContextAsync(_s.SandboxId, id, ct), cancellationToken);
        }

        public Task DeleteContextAsync(CodeContext context, CancellationToken cancellationToken = default(CancellationToken)) =>
            DeleteContextAsync(Id(context), cancellationToken);

        static string Id(CodeContext context)
        {
            if (context == null)
                throw new ArgumentNullException(nameof(context));
            return context.Id;
        }

        static readonly Task Done = Task.FromResult(true);
    }

    /// <summary>
    /// The languages a context runs, as Code.CreateContextAsync and
    /// RunCodeOptions.Language take them (strings, as in the other SDKs:
    /// "js" is JavaScript too, and case does not matter).
    /// </summary>
    public static class CodeLanguage
    {
        /// <summary>ipykernel: rich results (plots, HTML, JSON) as in Jupyter.</summary>
        public const string Python = "python";
        /// <summary>Node: top-level declarations stay for the next run, as in a browser console.</summary>
        public const string JavaScript = "javascript";
        /// <summary>An interactive bash: a non-zero status of the last command is an error named ExitStatus.</summary>
        public const string Bash = "bash";
    }

    /// <summary>How Code.RunAsync runs its code (the Python SDK's code.run keywords).</summary>
    public sealed class RunCodeOptions
    {
        /// <summary>
        /// The context to run in (CodeContext.Id). Unset: the sandbox's
        /// default context of Language, made on first use.
        /// </summary>
        public string ContextId { get; set; }

        /// <summary>The default context's language when ContextId is unset (CodeLanguage; Python when unset too).</summary>
        public string Language { get; set; }

        /// <summary>The server interrupts the run after this long; unset or zero: its default, 5 minutes.</summary>
        public TimeSpan? Timeout { get; set; }

        /// <summary>Called with each piece of stdout text as the kernel sends it.</summary>
        public Action<string> OnStdout { get; set; }

        public Action<string> OnStderr { get; set; }

        /// <summary>Called with each rich result (a plot shown, the run's own value) as it arrives.</summary>
        public Action<CodeResult> OnResult { get; set; }

        /// <summary>Called with the error the code raised, if it raised.</summary>
        public Action<CodeError> OnError { get; set; }
    }

    /// <summary>The requests of CodeService, built from the SDK's arguments (the Python SDK's _wire.py for code).</summary>
    internal static class CodeWire
    {
        /// <summary>A language's wire name: InvalidArgumentException, before anything is sent, for one the server has not.</summary>
        public static string Language(string language)
        {
            switch ((language ?? "").Trim().ToLowerInvariant())
            {
                case "python":
                    return "CODE_LANGUAGE_PYTHON";
                case "javascript":
                case "js":
                    return "CODE_LANGUAGE_JAVASCRIPT";
                case "bash":
                    return "CODE_LANGUAGE_BASH";
                default:
                    throw new InvalidArgumentException("unknown language \"" + language + "\": python, javascript or bash");
            }
        }

        /// <summary>RunCode's body: the context when named, the language when given, the timeout when positive.</summary>
        public static M.RunCodeRequest RunBody(string code, RunCodeOptions o)
        {
            var b = new M.RunCodeRequest(code: code);
            if (!string.IsNullOrEmpty(o.ContextId))
                b.ContextId = o.ContextId;
            if (!string.IsNullOrEmpty(o.Language))
                b.Language = Wire.ToEnum<M.RunCodeRequest.LanguageEnum>(Language(o.Language));
            if (o.Timeout.HasValue && o.Timeout.Value > TimeSpan.Zero)
                b.Timeout = Wire.Seconds(o.Timeout.Value);
            return b;
        }

        /// <summary>CreateCodeContext's body.</summary>
        public static M.CreateCodeContextRequest ContextBody(string language, string cwd, IDictionary<string, string> envs)
        {
            var b = new M.CreateCodeContextRequest(language: Wire.ToEnum<M.CreateCodeContextRequest.LanguageEnum>(Language(language)));
            if (!string.IsNullOrEmpty(cwd))
                b.Cwd = cwd;
            if (envs != null && envs.Count > 0)
                b.Env = new Dictionary<string, string>(envs);
            return b;
        }
    }
}
