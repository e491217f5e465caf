using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using TalonGenerated.Api;
using TalonGenerated.Client;

namespace Talon
{
    /// <summary>
    /// One configuration's way to the platform: an HttpClient over the
    /// failover handler, the generated operations on it, and the plumbing of
    /// the SDK's calls. Unary calls go through the generated layer; streams
    /// (NDJSON) and raw file bodies go through the same HttpClient directly,
    /// as in the Python and Go SDKs.
    /// </summary>
    internal sealed class Connection
    {
        public const string UserAgent = "talon-sdk-dotnet/0.1.0";

        // One per configuration and process: its connection pool is kept
        // between calls (a new one per create paid a connection each time).
        static readonly ConcurrentDictionary<TalonOptions.Resolved, Connection> Shared =
            new ConcurrentDictionary<TalonOptions.Resolved, Connection>();

        public readonly TalonOptions.Resolved Options;
        public readonly HttpClient Http;
        public readonly FailoverHandler Servers;
        public readonly SandboxServiceApi Sandboxes;
        public readonly FilesystemServiceApi Filesystem;
        public readonly ProcessServiceApi Processes;
        public readonly PreviewServiceApi Previews;
        public readonly VolumeServiceApi Volumes;
        public readonly AuthServiceApi Auth;
        public readonly PtyServiceApi Ptys;
        public readonly CodeServiceApi Code;
        public readonly BrowserServiceApi Browsers;
        public readonly AgentServiceApi Agents;

        Connection(TalonOptions.Resolved options)
        {
            Options = options;
            Servers = new FailoverHandler(options.Urls, options.Handler ?? new HttpClientHandler());
            // Never disposed: shared connections live as long as the process,
            // and a caller's own handler stays the caller's.
            Http = new HttpClient(Servers, false) { Timeout = System.Threading.Timeout.InfiniteTimeSpan };
            var api = new ApiClient(Http, options.BaseUrl) { SerializerSettings = Wire.JsonSettings };
            var config = new Configuration
            {
                BasePath = options.BaseUrl,
                AccessToken = options.ApiKey,
                UserAgent = UserAgent,
                // Timeouts are the SDK's own (Call), so that they raise
                // TalonTimeoutException and leave streams alone.
                Timeout = TimeSpan.Zero,
            };
            Sandboxes = new SandboxServiceApi(api, api, config);
            Filesystem = new FilesystemServiceApi(api, api, config);
            Processes = new ProcessServiceApi(api, api, config);
            Previews = new PreviewServiceApi(api, api, config);
            Volumes = new VolumeServiceApi(api, api, config);
            Auth = new AuthServiceApi(api, api, config);
            Ptys = new PtyServiceApi(api, api, config);
            Code = new CodeServiceApi(api, api, config);
            Browsers = new BrowserServiceApi(api, api, config);
            Agents = new AgentServiceApi(api, api, config);
        }

        /// <summary>The connection of these options (null: all from the environment).</summary>
        public static Connection For(TalonOptions options)
        {
            var r = (options ?? new TalonOptions()).Resolve();
            return r.Handler != null ? new Connection(r) : Shared.GetOrAdd(r, k => new Connection(k));
        }

        /// <summary>
        /// One unary call through the generated layer, within the request
        /// timeout (plus extra, for a call that waits on the server): its
        /// errors become the SDK's typed ones.
        /// </summary>
        public async Task<T> Call<T>(Func<CancellationToken, Task<T>> call, CancellationToken cancellationToken,
            TimeSpan extra = default(TimeSpan))
        {
            var limit = Limit(extra);
            using (var timeout = new CancellationTokenSource(limit))
            using (var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token))
            {
                try
                {
                    return await call(linked.Token).ConfigureAwait(false);
                }
                catch (ApiException e)
                {
                    throw FromApi(e);
                }
                catch (OperationCanceledException e) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
                {
                    throw new TalonTimeoutException("no answer within " + Wire.Seconds(limit), inner: e);
                }
                catch (JsonException e)
                {
                    throw new TalonException("the server answered with something that is not the JSON expected: " + e.Message, inner: e);
                }
            }
        }

        /// <summary>Call, for an operation whose answer the SDK does not use.</summary>
        public Task Run<T>(Func<CancellationToken, Task<T>> call, CancellationToken cancellationToken) =>
            Call(call, cancellationToken);

        /// <summary>
        /// A request of the SDK's own (a stream, a raw body) with the
        /// credential. An error answer raises its typed exception; a success
        /// is returned with its body unread when stream is set. The request
        /// timeout runs until the answer's headers arrive, unless unlimited.
        /// </summary>
        public async Task<HttpResponseMessage> SendAsync(HttpMethod method, string pathAndQuery, HttpContent content,
            CancellationToken cancellationToken, bool stream = false, string accept = "application/json", bool unlimited = false)
        {
            var req = new HttpRequestMessage(method, Options.BaseUrl + pathAndQuery) { Content = content };
            req.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Options.ApiKey);
            req.Headers.TryAddWithoutValidation("User-Agent", UserAgent);
            if (accept != null)
                req.Headers.Accept.ParseAdd(accept);
            if (stream && OnMono)
                req.Headers.ConnectionClose = true;
            var limit = unlimited ? System.Threading.Timeout.InfiniteTimeSpan : Limit(TimeSpan.Zero);
            using (var timeout = new CancellationTokenSource(limit))
            using (var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token))
            {
                HttpResponseMessage resp;
                try
                {
                    var how = stream ? HttpCompletionOption.ResponseHeadersRead : HttpCompletionOption.ResponseContentRead;
                    resp = await Http.SendAsync(req, how, linked.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException e) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
                {
                    throw new TalonTimeoutException("no answer within " + Wire.Seconds(limit), inner: e);
                }
                if (resp.IsSuccessStatusCode)
                    return resp;
                using (resp)
                {
                    var body = await resp.Content.ReadAsStringAsync().ConfigureAwait(false);
                    throw ErrorMap.FromBody((int)resp.StatusCode, body, RequestId(resp));
                }
            }
        }

        /// <summary>
        /// Mono's HttpClient puts the connection of a stream the SDK stopped
        /// reading (a disconnected background command, a cancelled run)
        /// back in its pool when the server later ends that stream, in a
        /// state where the next request on it waits 30 s. So on Mono a
        /// stream's connection is used once (Connection: close); .NET's
        /// handler closes an unread response's connection itself. Costs a
        /// connection per stream: no measurable change to an exec on
        /// loopback (6.4-6.6 ms either way), a TLS handshake elsewhere.
        /// </summary>
        internal static readonly bool OnMono = Type.GetType("Mono.Runtime") != null;

        /// <summary>
        /// The server calls go to now, without a trailing slash: the first
        /// one until a call failed over to another. Links the SDK builds
        /// itself (a preview's path form) point there.
        /// </summary>
        public string CurrentUrl => Options.Urls[Servers.Current].ToString().TrimEnd('/');

        /// <summary>The request timeout plus extra; infinite stays infinite.</summary>
        TimeSpan Limit(TimeSpan extra) => Options.RequestTimeout == System.Threading.Timeout.InfiniteTimeSpan
            ? System.Threading.Timeout.InfiniteTimeSpan : Options.RequestTimeout + extra;

        static string RequestId(HttpResponseMessage resp)
        {
            System.Collections.Generic.IEnumerable<string> v;
            return resp.Headers.TryGetValues("x-request-id", out v) ? v.FirstOrDefault() : null;
        }

        /// <summary>The typed exception of the generated layer's ApiException (its status and raw body).</summary>
        internal static TalonException FromApi(ApiException e)
        {
            string requestId = null;
            if (e.Headers != null)
                foreach (var h in e.Headers)
                    if (string.Equals(h.Key, "x-request-id", StringComparison.OrdinalIgnoreCase) && h.Value.Count > 0)
                        requestId = h.Value[0];
            var body = e.ErrorContent as string ?? (e.ErrorContent == null ? e.Message : e.ErrorContent.ToString());
            return ErrorMap.FromBody(e.ErrorCode, body, requestId);
        }
    }
}
