// The ops on the SDK's newer surface: terminals (sbx.Pty), agent runs
// (sbx.Agent), code contexts (sbx.Code) and the browser (sbx.Browser).
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Talon.Conformance
{
    sealed partial class Case
    {
        static readonly byte[] PngMagic = { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a };

        /// <summary>A terminal: the input typed, then its end awaited (60 s at most); its output as the callback saw it.</summary>
        async Task<JObject> Pty(JObject a)
        {
            var s = await SandboxOf(a);
            var output = new MemoryStream();
            var cmd = a["cmd"];
            var o = new PtyOptions
            {
                Cols = (int)(Num(a, "cols") ?? 80),
                Rows = (int)(Num(a, "rows") ?? 24),
                Cmd = cmd == null || cmd.Type == JTokenType.Null ? null
                    : cmd.Type == JTokenType.String ? Commands.Shell((string)cmd) : Strings(cmd),
                OnData = b =>
                {
                    lock (output)
                        output.Write(b, 0, b.Length);
                },
            };
            using (var h = await s.Pty.CreateAsync(o, _ct))
            {
                await h.SendInputAsync(Str(a, "input") ?? "", _ct);
                using (var wait = CancellationTokenSource.CreateLinkedTokenSource(_ct))
                {
                    wait.CancelAfter(TimeSpan.FromSeconds(60));
                    var r = await Finished(() => h.WaitAsync(wait.Token));
                    string text;
                    lock (output)
                        text = new UTF8Encoding(false).GetString(output.ToArray());
                    return new JObject { ["output"] = text, ["exit_code"] = r.ExitCode };
                }
            }
        }

        /// <summary>An agent run to its end, then followed again by its id after event 1.</summary>
        async Task<JObject> AgentRun(JObject a)
        {
            var s = await SandboxOf(a);
            var prompt = Str(a, "prompt") ?? "";
            var cmd = a["cmd"];
            var run = cmd.Type == JTokenType.String
                ? await s.Agent.RunAsync((string)cmd, prompt, null, _ct)
                : await s.Agent.RunAsync(Strings(cmd), prompt, null, _ct);
            var again = await s.Agent.ConnectAsync(run.RunId, 1, null, _ct);
            return new JObject
            {
                ["kinds"] = new JArray(run.Events.Select(e => e.KindName)),
                ["output"] = run.Output,
                ["file_changes"] = new JArray(run.FileChanges.Select(e => e.Change + " " + e.Path)),
                ["exit_code"] = run.ExitCode,
                ["replay_matches"] = again.Events.Select(e => e.Seq).SequenceEqual(run.Events.Skip(1).Select(e => e.Seq)),
            };
        }

        /// <summary>A context of the language, the runs in it in turn, then the context deleted.</summary>
        async Task<JObject> Code(JObject a)
        {
            var s = await SandboxOf(a);
            var ctx = await s.Code.CreateContextAsync(Str(a, "language"), null, null, _ct);
            var texts = new JArray();
            var stdouts = new JArray();
            var errors = new JArray();
            foreach (var code in Strings(a["runs"]) ?? new List<string>())
            {
                var x = await s.Code.RunAsync(code, new RunCodeOptions { ContextId = ctx.Id }, _ct);
                texts.Add(x.Text ?? "");
                stdouts.Add(x.Stdout);
                errors.Add(x.Error != null ? x.Error.Name : "");
            }
            await s.Code.DeleteContextAsync(ctx, _ct);
            return new JObject { ["texts"] = texts, ["stdouts"] = stdouts, ["errors"] = errors };
        }

        /// <summary>
        /// The browser started, its CDP URL's /json/version fetched with no
        /// credential of ours (the URL carries its token), a screenshot,
        /// then stopped.
        /// </summary>
        async Task<JObject> Browser(JObject a)
        {
            var s = await SandboxOf(a);
            var b = await s.Browser.StartAsync(Str(a, "window_size"), null, _ct);
            string raw;
            using (var resp = await Plain.GetAsync(b.CdpUrl + "/json/version", _ct))
                raw = await resp.Content.ReadAsStringAsync();
            var version = JObject.Parse(raw);
            var png = await s.Browser.ScreenshotAsync(false, _ct);
            var stopped = await s.Browser.StopAsync(_ct);
            return new JObject
            {
                ["state"] = Lower(b.State),
                ["window_size"] = b.WindowSize,
                ["cdp_url_names_sandbox"] = b.CdpUrl.Contains("/cdp/" + s.SandboxId + "/"),
                ["version_ws_matches"] = (string)version["webSocketDebuggerUrl"] == b.WebSocketDebuggerUrl,
                ["loopback_hidden"] = !raw.Contains("127.0.0.1:9222"),
                ["png"] = png != null && png.Length >= PngMagic.Length && png.Take(PngMagic.Length).SequenceEqual(PngMagic),
                ["stopped_state"] = Lower(stopped.State),
                ["stopped_cdp_url"] = stopped.CdpUrl,
            };
        }
    }
}
