using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using Talon;

namespace Talon.Tests
{
    /// <summary>A request as the fake server saw it (its body read at send time).</summary>
    public sealed class Seen
    {
        public HttpMethod Method;
        public Uri Uri;
        public string Body;
        public byte[] BodyBytes;
        public string ContentType;
        public string Authorization;
        public string Accept;
        public bool? ConnectionClose;

        public JObject Json => JObject.Parse(Body);

        /// <summary>The query's values of one name, decoded, in order.</summary>
        public IList<string> Query(string name)
        {
            var q = Uri.Query.TrimStart('?');
            return q.Split(new[] { '&' }, StringSplitOptions.RemoveEmptyEntries)
                .Select(p => p.Split(new[] { '=' }, 2))
                .Where(kv => Uri.UnescapeDataString(kv[0]) == name)
                .Select(kv => kv.Length > 1 ? Uri.UnescapeDataString(kv[1]) : "")
                .ToList();
        }
    }

    /// <summary>
    /// An HttpMessageHandler that answers from a function and remembers what
    /// it was sent: the offline tests' server. The function may throw, as a
    /// real handler does when it cannot connect.
    /// </summary>
    public sealed class FakeHandler : HttpMessageHandler
    {
        readonly Func<Seen, HttpResponseMessage> _answer;
        public readonly List<Seen> Requests = new List<Seen>();
        public TimeSpan Delay = TimeSpan.Zero;

        public FakeHandler(Func<Seen, HttpResponseMessage> answer)
        {
            _answer = answer;
        }

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var seen = new Seen
            {
                Method = request.Method,
                Uri = request.RequestUri,
                Authorization = request.Headers.Authorization == null ? null : request.Headers.Authorization.ToString(),
                Accept = string.Join(",", request.Headers.Accept.Select(a => a.ToString())),
                ConnectionClose = request.Headers.ConnectionClose,
            };
            if (request.Content != null)
            {
                seen.BodyBytes = await request.Content.ReadAsByteArrayAsync().ConfigureAwait(false);
                seen.Body = Encoding.UTF8.GetString(seen.BodyBytes);
                seen.ContentType = request.Content.Headers.ContentType == null ? null : request.Content.Headers.ContentType.MediaType;
            }
            lock (Requests)
                Requests.Add(seen);
            if (Delay > TimeSpan.Zero)
                await Task.Delay(Delay, cancellationToken).ConfigureAwait(false);
            var resp = _answer(seen);
            resp.RequestMessage = request;
            return resp;
        }

        public Seen Last => Requests[Requests.Count - 1];

        /// <summary>Asserts the last request's method and path, and that a bodiless one had no body.</summary>
        public void AssertLast(string method, string path, bool bodiless = false)
        {
            NUnit.Framework.Assert.AreEqual(method, Last.Method.Method);
            NUnit.Framework.Assert.AreEqual(path, Last.Uri.AbsolutePath);
            if (bodiless)
                NUnit.Framework.Assert.IsNull(Last.Body);
        }

        public static HttpResponseMessage Json(string json, int status = 200, string requestId = null)
        {
            var r = new HttpResponseMessage((HttpStatusCode)status) { Content = new StringContent(json, Encoding.UTF8, "application/json") };
            if (requestId != null)
                r.Headers.TryAddWithoutValidation("x-request-id", requestId);
            return r;
        }

        public static HttpResponseMessage Json(JToken json, int status = 200) => Json(json.ToString(Newtonsoft.Json.Formatting.None), status);

        public static HttpResponseMessage Bytes(byte[] data) =>
            new HttpResponseMessage(HttpStatusCode.OK) { Content = new ByteArrayContent(data) };

        /// <summary>NDJSON: one JSON object a line.</summary>
        public static HttpResponseMessage Lines(params JObject[] lines) =>
            Json(string.Join("\n", lines.Select(l => l.ToString(Newtonsoft.Json.Formatting.None))) + "\n");

        /// <summary>What HttpClientHandler throws when nothing listens (a request that reached no server).</summary>
        public static Exception Refused() =>
            new HttpRequestException("Connection refused", new SocketException((int)SocketError.ConnectionRefused));

        /// <summary>What it throws when the connection broke after the request went out.</summary>
        public static Exception Reset() =>
            new HttpRequestException("Error while copying content", new IOException("Connection reset by peer",
                new SocketException((int)SocketError.ConnectionReset)));
    }

    /// <summary>Canned answers of the gateway.</summary>
    public static class Answers
    {
        public static JObject Sandbox(string id = "sbx-1", string state = "SANDBOX_STATE_RUNNING") => new JObject
        {
            ["sandboxId"] = id,
            ["state"] = state,
            ["image"] = "host",
            ["createTime"] = "2025-01-02T03:04:05Z",
            ["metadata"] = new JObject { ["user"] = "ann" },
            ["resources"] = new JObject { ["cpuMillis"] = "1000", ["memoryMib"] = "512" },
            ["isolation"] = "ISOLATION_CONTAINER",
        };

        public static HttpResponseMessage Wrapped(JObject sandbox) => FakeHandler.Json(new JObject { ["sandbox"] = sandbox });

        public static JObject Snapshot(string id = "snap-1", string name = "before-upgrade") => new JObject
        {
            ["snapshotId"] = id,
            ["name"] = name,
            ["sandboxId"] = "sbx-1",
            ["image"] = "python:3.12",
            ["sizeBytes"] = "16777216",
            ["createTime"] = "2025-01-02T03:04:05Z",
            ["frozen"] = "0.012s",
            ["memory"] = false,
        };

        public static JObject Volume(string name = "data", string sandboxId = null) => new JObject
        {
            ["volumeId"] = "vol_01hzzzzzzzzzzzzzzzzzzzzzzz",
            ["name"] = name,
            ["sizeMib"] = "2048",
            ["createTime"] = "2025-01-02T03:04:05Z",
            ["sandboxId"] = sandboxId ?? "",
        };

        public static HttpResponseMessage Error(int status, int code, string message, string requestId = "req-1") =>
            FakeHandler.Json(new JObject { ["code"] = code, ["message"] = message, ["details"] = new JArray() }.ToString(), status, requestId);

        public static JObject Started(int pid) => new JObject { ["event"] = new JObject { ["started"] = new JObject { ["pid"] = pid } } };

        public static JObject Output(string text, bool stderr = false, int seq = 0) => new JObject
        {
            ["event"] = new JObject
            {
                ["output"] = new JObject
                {
                    ["stream"] = stderr ? "OUTPUT_STREAM_STDERR" : "OUTPUT_STREAM_STDOUT",
                    ["data"] = Convert.ToBase64String(Encoding.UTF8.GetBytes(text)),
                    ["seq"] = seq.ToString(),
                },
            },
        };

        public static JObject Exited(int code, bool timedOut = false, int signal = 0) => new JObject
        {
            ["event"] = new JObject { ["exited"] = new JObject { ["exitCode"] = code, ["timedOut"] = timedOut, ["signal"] = signal } },
        };
    }

    /// <summary>A sandbox over a fake gateway: what the per-sandbox calls' tests start from.</summary>
    public static class Connected
    {
        /// <summary>
        /// Sandbox sbx-1 attached through ConnectAsync (its GET answered
        /// here), every other request answered by route; the fake's
        /// requests are cleared, so they hold only the test's own.
        /// </summary>
        public static async Task<Tuple<Sandbox, FakeHandler>> To(Func<Seen, HttpResponseMessage> route, string urls = "http://a.test:8080")
        {
            var fake = new FakeHandler(s => s.Method.Method == "GET" && s.Uri.AbsolutePath == "/v1/sandboxes/sbx-1"
                ? Answers.Wrapped(Answers.Sandbox()) : route(s));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake, urls)));
            lock (fake.Requests)
                fake.Requests.Clear();
            return Tuple.Create(sbx, fake);
        }
    }

    public static class Opt
    {
        /// <summary>Connection settings over a fake handler (a fresh connection: the SDK shares only handler-less ones).</summary>
        public static TalonOptions Over(HttpMessageHandler handler, string urls = "http://a.test:8080") =>
            new TalonOptions { ApiKey = "key-1", BaseUrl = urls, HttpHandler = handler };
    }

    public static class AssertAsync
    {
        /// <summary>Assert.ThrowsAsync, which NUnit 2.6 lacks.</summary>
        public static async Task<T> Throws<T>(Func<Task> call) where T : Exception
        {
            try
            {
                await call();
            }
            catch (T e)
            {
                return e;
            }
            catch (Exception e)
            {
                NUnit.Framework.Assert.Fail("expected " + typeof(T).Name + ", got " + e.GetType().Name + ": " + e.Message);
            }
            NUnit.Framework.Assert.Fail("expected " + typeof(T).Name + ", got no exception");
            return null;
        }
    }
}
