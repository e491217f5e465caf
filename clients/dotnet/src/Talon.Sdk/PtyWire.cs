using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Talon
{
    /// <summary>
    /// The PTY's WebSocket (GET /v1/sandboxes/{id}/pty, PtyService.Attach
    /// bridged by the gateway, gateway-rest/src/ws.rs): text frames are JSON
    /// AttachRequests, the first {"open": …}; a binary frame is raw input.
    /// The server answers {"pid": n} as text, output as binary frames,
    /// {"exited": …} as text, and a failure as a last text frame
    /// {"error": status} before it closes. Kept apart from the handle so
    /// that the encoding is tested without a socket.
    /// </summary>
    internal static class PtyWire
    {
        /// <summary>The open of a new process under a PTY: PtyOpen.command and the initial size.</summary>
        public static string Open(IList<string> argv, PtyOptions o)
        {
            var command = new JObject { ["command"] = new JArray(argv) };
            if (o.Envs != null && o.Envs.Count > 0)
            {
                var env = new JObject();
                foreach (var kv in o.Envs)
                    env[kv.Key] = kv.Value ?? "";
                command["env"] = env;
            }
            if (!string.IsNullOrEmpty(o.Cwd))
                command["cwd"] = o.Cwd;
            if (!string.IsNullOrEmpty(o.User))
                command["user"] = o.User;
            if (!string.IsNullOrEmpty(o.Tag))
                command["tag"] = o.Tag;
            return Text(new JObject { ["open"] = new JObject { ["command"] = command, ["size"] = Size(o.Cols, o.Rows) } });
        }

        /// <summary>
        /// The open of a running PTY process (by tag when one is given, else
        /// by pid). The server sets its size to the one sent, as an attach
        /// from a terminal of that size should.
        /// </summary>
        public static string Attach(int pid, string tag, int cols, int rows)
        {
            var process = string.IsNullOrEmpty(tag) ? new JObject { ["pid"] = pid } : new JObject { ["tag"] = tag };
            return Text(new JObject { ["open"] = new JObject { ["process"] = process, ["size"] = Size(cols, rows) } });
        }

        public static string Resize(int cols, int rows) => Text(new JObject { ["resize"] = Size(cols, rows) });

        static JObject Size(int cols, int rows)
        {
            CheckSize(cols, rows);
            return new JObject { ["cols"] = cols, ["rows"] = rows };
        }

        /// <summary>A terminal is 1 to 65535 columns and rows (the kernel's winsize is 16-bit).</summary>
        public static void CheckSize(int cols, int rows)
        {
            if (cols < 1 || cols > 65535 || rows < 1 || rows > 65535)
                throw new InvalidArgumentException("a terminal is 1 to 65535 columns and rows, not " +
                    cols.ToString(CultureInfo.InvariantCulture) + "x" + rows.ToString(CultureInfo.InvariantCulture));
        }

        static string Text(JObject o) => o.ToString(Formatting.None);

        /// <summary>
        /// One text frame of the server: {"pid"} is Started, {"exited"}
        /// Exited, {"output": base64} (should output ever come as text)
        /// Stdout, anything else Unknown. {"error"} raises its typed exception.
        /// </summary>
        public static ProcessEvent Parse(string text)
        {
            JObject d;
            try
            {
                d = JObject.Parse(text);
            }
            catch (JsonException e)
            {
                throw new TalonException("a PTY text frame is not a JSON object: " + e.Message, inner: e);
            }
            var err = d["error"] as JObject;
            if (err != null)
                throw ErrorMap.FromStatus(err);
            if (d["pid"] != null)
                return new ProcessEvent { Kind = ProcessEvent.Kinds.Started, Pid = d.Value<int?>("pid") ?? 0 };
            var exited = d["exited"] as JObject;
            if (exited != null)
                return new ProcessEvent
                {
                    Kind = ProcessEvent.Kinds.Exited,
                    ExitCode = exited.Value<int?>("exitCode") ?? 0,
                    Signal = exited.Value<int?>("signal") ?? 0,
                    TimedOut = exited.Value<bool?>("timedOut") ?? false,
                };
            var output = d.Value<string>("output");
            if (output != null)
                return new ProcessEvent { Kind = ProcessEvent.Kinds.Stdout, Data = Convert.FromBase64String(output) };
            return new ProcessEvent();
        }

        /// <summary>
        /// The socket's address on a server: its URL with ws(s) for
        /// http(s), and the path below the server's own prefix.
        /// </summary>
        public static Uri SocketUrl(Uri server, string path)
        {
            var b = new UriBuilder(server) { Scheme = server.Scheme == "https" ? "wss" : "ws" };
            b.Path = b.Path.TrimEnd('/') + path;
            return b.Uri;
        }

        /// <summary>
        /// The SDK's socket: a ClientWebSocket that sends the API key as
        /// `Authorization: Bearer`, as every other call does. (The gateway
        /// also takes it as the subprotocol `bearer.KEY`, for browsers that
        /// cannot set headers; a header keeps it out of the protocol list
        /// and takes any key.)
        /// </summary>
        public static async Task<WebSocket> ConnectAsync(Uri url, string apiKey, CancellationToken cancellationToken)
        {
            var ws = new ClientWebSocket();
            try
            {
                ws.Options.SetRequestHeader("Authorization", "Bearer " + apiKey);
                try
                {
                    ws.Options.SetRequestHeader("User-Agent", Connection.UserAgent);
                }
                catch (ArgumentException)
                {
                    // .NET Framework's ClientWebSocket counts it among the
                    // headers it sets itself; it only names the SDK.
                }
                await ws.ConnectAsync(url, cancellationToken).ConfigureAwait(false);
                return ws;
            }
            catch
            {
                ws.Dispose();
                throw;
            }
        }

        /// <summary>
        /// Reads one whole message (its fragments joined). Null for the
        /// server's close; its status is then the socket's CloseStatus.
        /// </summary>
        public static async Task<Frame> ReceiveAsync(WebSocket ws, byte[] buffer, CancellationToken cancellationToken)
        {
            System.IO.MemoryStream whole = null;
            while (true)
            {
                var r = await ws.ReceiveAsync(new ArraySegment<byte>(buffer), cancellationToken).ConfigureAwait(false);
                if (r.MessageType == WebSocketMessageType.Close)
                    return null;
                if (r.EndOfMessage && whole == null)
                    return new Frame(r.MessageType == WebSocketMessageType.Text, Copy(buffer, r.Count));
                whole = whole ?? new System.IO.MemoryStream();
                whole.Write(buffer, 0, r.Count);
                if (r.EndOfMessage)
                    return new Frame(r.MessageType == WebSocketMessageType.Text, whole.ToArray());
            }
        }

        static byte[] Copy(byte[] b, int n)
        {
            var c = new byte[n];
            Buffer.BlockCopy(b, 0, c, 0, n);
            return c;
        }

        /// <summary>
        /// Why the socket closed before the process exited, as an error: the
        /// server's close reason when it gave one (an error frame, when it
        /// sent one, was raised already).
        /// </summary>
        public static TalonException ClosedEarly(WebSocketCloseStatus? status, string reason)
        {
            var code = status.HasValue ? ((int)status.Value).ToString(CultureInfo.InvariantCulture) : "none";
            var why = "the terminal's connection closed (code " + code + (string.IsNullOrEmpty(reason) ? "" : ": " + reason)
                + ") before its process exited; Pty.ConnectAsync(pid) attaches again";
            if (status == WebSocketCloseStatus.InternalServerError)
                return new InternalException(why);
            return new UnavailableException(why);
        }

        /// <summary>A whole message of the socket.</summary>
        internal sealed class Frame
        {
            public readonly bool IsText;
            public readonly byte[] Data;

            public Frame(bool isText, byte[] data)
            {
                IsText = isText;
                Data = data;
            }

            public string Text => new UTF8Encoding(false).GetString(Data);
        }
    }
}
