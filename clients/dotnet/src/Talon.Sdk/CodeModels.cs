using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>A context: a kernel inside the sandbox that keeps its state between runs.</summary>
    public sealed class CodeContext
    {
        /// <summary>What RunCodeOptions.ContextId and the context calls take.</summary>
        public string Id { get; private set; }
        /// <summary>"python", "javascript" or "bash" (a string: a newer server may run another); "" when unset.</summary>
        public string Language { get; private set; }
        /// <summary>Its kernel's working directory.</summary>
        public string Cwd { get; private set; }
        /// <summary>Runs so far (the kernel's execution count); 0 again after a restart.</summary>
        public int ExecutionCount { get; private set; }
        public DateTimeOffset? CreatedAt { get; private set; }

        internal static CodeContext Of(M.CodeContext c)
        {
            if (c == null)
                throw new TalonException("the server's answer has no code context");
            var lang = Wire.Tail(c.Language, "CODE_LANGUAGE_");
            return new CodeContext
            {
                Id = c.ContextId ?? "",
                Language = lang == "unspecified" ? "" : lang,
                Cwd = c.Cwd ?? "",
                ExecutionCount = c.ExecutionCount,
                CreatedAt = Wire.Time(c.CreateTime),
            };
        }

        public override string ToString() => "CodeContext(" + Id + ", " + Language + ", " + Cwd + ")";
    }

    /// <summary>
    /// A rich result of a run, by MIME type (Data): a value displayed, a
    /// plot shown, or the run's own value (IsMainResult: the last
    /// expression's). Text types are as the kernel sent them; binary ones
    /// (image/png, image/jpeg, …) are base64 text as Jupyter sends them,
    /// which Png, Jpeg and Bytes decode; application/json is JSON text,
    /// which Json parses.
    /// </summary>
    public sealed class CodeResult
    {
        public CodeResult(IDictionary<string, string> data, bool isMainResult = false)
        {
            Data = new Dictionary<string, string>(data ?? new Dictionary<string, string>(), StringComparer.Ordinal);
            IsMainResult = isMainResult;
        }

        /// <summary>MIME type to representation, as the server sent it.</summary>
        public IReadOnlyDictionary<string, string> Data { get; }

        /// <summary>The run's own value (the last expression), not a display.</summary>
        public bool IsMainResult { get; }

        /// <summary>A MIME type's representation as sent, or null when the result has none.</summary>
        public string Get(string mimeType)
        {
            string v;
            return mimeType != null && Data.TryGetValue(mimeType, out v) ? v : null;
        }

        /// <summary>
        /// A binary MIME type's bytes (its base64 decoded), or null when the
        /// result has none; TalonException when it is not base64.
        /// </summary>
        public byte[] Bytes(string mimeType)
        {
            var v = Get(mimeType);
            if (v == null)
                return null;
            try
            {
                return Convert.FromBase64String(v); // Jupyter's line breaks are skipped
            }
            catch (FormatException e)
            {
                throw new TalonException("the result's " + mimeType + " is not base64: " + e.Message, inner: e);
            }
        }

        /// <summary>text/plain: the repr (Python), util.inspect (Node) or text.</summary>
        public string Text => Get("text/plain");
        public string Html => Get("text/html");
        public string Markdown => Get("text/markdown");
        public string Latex => Get("text/latex");
        /// <summary>image/svg+xml: SVG is text.</summary>
        public string Svg => Get("image/svg+xml");
        public string JavaScript => Get("application/javascript");
        /// <summary>image/png, decoded: the file's bytes (they start with 89 50 4E 47).</summary>
        public byte[] Png => Bytes("image/png");
        /// <summary>image/png as sent: base64 text, for an HTML data: URL or a notebook.</summary>
        public string PngBase64 => Get("image/png");
        public byte[] Jpeg => Bytes("image/jpeg");
        /// <summary>application/pdf, decoded (base64 as sent, like the images).</summary>
        public byte[] Pdf => Bytes("application/pdf");

        /// <summary>
        /// application/json parsed (a JObject, JArray or value), or null
        /// when the result has none; TalonException when it is not JSON.
        /// Strings that look like dates stay strings.
        /// </summary>
        public JToken Json
        {
            get
            {
                var v = Get("application/json");
                if (v == null)
                    return null;
                try
                {
                    return CodeFollower.ParseToken(v);
                }
                catch (JsonException e)
                {
                    throw new TalonException("the result's application/json is not JSON: " + e.Message, inner: e);
                }
            }
        }

        /// <summary>The MIME types it has, sorted.</summary>
        public IReadOnlyList<string> Formats() => Data.Keys.OrderBy(k => k, StringComparer.Ordinal).ToList();

        public override string ToString() => "CodeResult(" + string.Join(", ", Formats()) + (IsMainResult ? ", main" : "") + ")";
    }

    /// <summary>What the code raised: Name ("ZeroDivisionError"), Value (its message) and Traceback, one entry per frame.</summary>
    public sealed class CodeError
    {
        public CodeError(string name, string value, IList<string> traceback = null)
        {
            Name = name ?? "";
            Value = value ?? "";
            Traceback = new List<string>(traceback ?? new string[0]);
        }

        /// <summary>The exception's type; in Bash "ExitStatus"; "KernelDied" when the kernel was killed under the run.</summary>
        public string Name { get; }
        /// <summary>Its message; in Bash the status.</summary>
        public string Value { get; }
        /// <summary>As the kernel formats it (Python's may carry ANSI colours).</summary>
        public IReadOnlyList<string> Traceback { get; }

        public override string ToString() => Name + ": " + Value;
    }

    /// <summary>
    /// A run (Code.RunAsync): its output, rich results, the error the code
    /// raised (null when it did not) and how it ended.
    /// </summary>
    public sealed class Execution
    {
        internal readonly StringBuilder Out = new StringBuilder();
        internal readonly StringBuilder Err = new StringBuilder();
        internal readonly List<CodeResult> ResultList = new List<CodeResult>();

        public string Stdout => Out.ToString();
        public string Stderr => Err.ToString();
        /// <summary>In the order they came: displays (plots) and the run's own value.</summary>
        public IReadOnlyList<CodeResult> Results => ResultList;
        /// <summary>What the code raised, or null. An error is data here, not an exception.</summary>
        public CodeError Error { get; internal set; }
        /// <summary>The context's execution count after this run.</summary>
        public int ExecutionCount { get; internal set; }
        public TimeSpan Duration { get; internal set; }
        /// <summary>InterruptAsync or the timeout ended it.</summary>
        public bool Interrupted { get; internal set; }
        /// <summary>Its timeout ended it.</summary>
        public bool TimedOut { get; internal set; }

        /// <summary>The main result's text/plain (the last expression's value), or null.</summary>
        public string Text
        {
            get
            {
                foreach (var r in ResultList)
                    if (r.IsMainResult)
                        return r.Text;
                return null;
            }
        }

        public override string ToString() =>
            "Execution(" + ResultList.Count + " results" + (Error != null ? ", " + Error : "") + (Interrupted ? ", interrupted" : "") + ")";
    }

    /// <summary>
    /// Folds RunCode's NDJSON lines ({"stdout"|"stderr"|"result"|"codeError"|"completed": …})
    /// into an Execution, calling the callbacks as they come; an {"error": …}
    /// line (the stream's own failure) raises.
    /// </summary>
    internal sealed class CodeFollower
    {
        readonly Execution _x = new Execution();
        readonly Action<string> _onStdout;
        readonly Action<string> _onStderr;
        readonly Action<CodeResult> _onResult;
        readonly Action<CodeError> _onError;
        bool _done;

        public CodeFollower(Action<string> onStdout, Action<string> onStderr, Action<CodeResult> onResult, Action<CodeError> onError)
        {
            _onStdout = onStdout;
            _onStderr = onStderr;
            _onResult = onResult;
            _onError = onError;
        }

        /// <summary>
        /// JSON without Json.NET's date guessing: JObject.Parse would turn a
        /// printed "2025-01-02T03:04:05Z" into a DateTime and give it back
        /// reformatted.
        /// </summary>
        internal static JToken ParseToken(string json)
        {
            using (var r = new JsonTextReader(new StringReader(json)) { DateParseHandling = DateParseHandling.None })
            {
                var t = JToken.ReadFrom(r);
                while (r.Read())
                    if (r.TokenType != JsonToken.Comment)
                        throw new JsonReaderException("more after the JSON value");
                return t;
            }
        }

        static string Str(JToken t)
        {
            if (t == null || t.Type == JTokenType.Null)
                return "";
            return t.Type == JTokenType.String ? (string)t : t.ToString(Formatting.None);
        }

        public void Add(string line)
        {
            JObject ev;
            try
            {
                ev = ParseToken(line) as JObject;
            }
            catch (JsonException e)
            {
                throw new TalonException("a code run's stream line is not JSON: " + e.Message, inner: e);
            }
            if (ev == null)
                throw new TalonException("a code run's stream line is not a JSON object");
            var err = ev["error"] as JObject;
            if (err != null)
                throw ErrorMap.FromStatus(err);
            JObject o;
            if ((o = ev["stdout"] as JObject) != null)
            {
                var t = Str(o["text"]);
                _x.Out.Append(t);
                _onStdout?.Invoke(t);
            }
            else if ((o = ev["stderr"] as JObject) != null)
            {
                var t = Str(o["text"]);
                _x.Err.Append(t);
                _onStderr?.Invoke(t);
            }
            else if ((o = ev["result"] as JObject) != null)
            {
                var data = new Dictionary<string, string>();
                var d = o["data"] as JObject;
                if (d != null)
                    foreach (var p in d.Properties())
                        data[p.Name] = Str(p.Value);
                var main = o["isMainResult"];
                var r = new CodeResult(data, main != null && main.Type == JTokenType.Boolean && (bool)main);
                _x.ResultList.Add(r);
                _onResult?.Invoke(r);
            }
            else if ((o = ev["codeError"] as JObject) != null)
            {
                var tb = o["traceback"] as JArray;
                _x.Error = new CodeError(Str(o["name"]), Str(o["value"]), tb == null ? null : tb.Select(Str).ToList());
                _onError?.Invoke(_x.Error);
            }
            else if ((o = ev["completed"] as JObject) != null)
            {
                _x.ExecutionCount = o.Value<int?>("executionCount") ?? 0;
                _x.Duration = Wire.Duration(Str(o["duration"])) ?? TimeSpan.Zero;
                _x.Interrupted = o.Value<bool?>("interrupted") ?? false;
                _x.TimedOut = o.Value<bool?>("timedOut") ?? false;
                _done = true;
            }
            // Anything else: an event a newer server adds, skipped.
        }

        /// <summary>The run; a stream that ended without its completed line is an error (the run's end is unknown).</summary>
        public Execution Result()
        {
            if (!_done)
                throw new UnavailableException("the code run's stream ended before the run completed");
            return _x;
        }
    }
}
