using System;
using System.Collections.Generic;
using System.Net.Http;

namespace Talon
{
    /// <summary>
    /// Where the platform is and who calls it. Every call takes these (or a
    /// subclass of them); what is left unset comes from TALON_API_KEY and
    /// TALON_URL, as in the other SDKs.
    /// </summary>
    public class TalonOptions
    {
        /// <summary>The gateway the SDK talks to when neither BaseUrl nor TALON_URL says.</summary>
        public const string DefaultUrl = "http://127.0.0.1:8080";

        /// <summary>An API key or access token; TALON_API_KEY when unset.</summary>
        public string ApiKey { get; set; }

        /// <summary>
        /// The REST gateway's URL; TALON_URL when unset. Several servers of one
        /// platform, comma-separated ("http://a:8080,http://b:8080"), are
        /// tried in turn: see <see cref="TalonOptions.ParseUrls"/>.
        /// </summary>
        public string BaseUrl { get; set; }

        /// <summary>
        /// How long a unary call may take before it fails with
        /// TalonTimeoutException (a create that waits for its sandbox gets its
        /// wait on top). Streams (command output) and file contents are
        /// limited only until the answer's headers arrive.
        /// Timeout.InfiniteTimeSpan: no limit.
        /// </summary>
        public TimeSpan RequestTimeout { get; set; } = TimeSpan.FromSeconds(60);

        /// <summary>
        /// The HTTP stack under the SDK (a proxy, a test's fake). It is not
        /// disposed by the SDK. Unset: one shared HttpClientHandler per
        /// configuration, so its connection pool is kept between calls.
        /// </summary>
        public HttpMessageHandler HttpHandler { get; set; }

        /// <summary>Copies the connection settings (not a subclass's) of another options object.</summary>
        protected void CopyConnection(TalonOptions other)
        {
            if (other == null)
                return;
            ApiKey = other.ApiKey;
            BaseUrl = other.BaseUrl;
            RequestTimeout = other.RequestTimeout;
            HttpHandler = other.HttpHandler;
        }

        /// <summary>The settings with the environment's filled in, checked.</summary>
        internal Resolved Resolve()
        {
            var key = !string.IsNullOrEmpty(ApiKey) ? ApiKey : Environment.GetEnvironmentVariable("TALON_API_KEY");
            if (string.IsNullOrEmpty(key))
                throw new AuthenticationException("no API key: set TalonOptions.ApiKey or TALON_API_KEY");
            var raw = !string.IsNullOrEmpty(BaseUrl) ? BaseUrl : Environment.GetEnvironmentVariable("TALON_URL");
            if (string.IsNullOrEmpty(raw))
                raw = DefaultUrl;
            if (RequestTimeout <= TimeSpan.Zero && RequestTimeout != System.Threading.Timeout.InfiniteTimeSpan)
                throw new InvalidArgumentException("RequestTimeout must be positive (or Timeout.InfiniteTimeSpan)");
            return new Resolved(key, ParseUrls(raw), RequestTimeout, HttpHandler);
        }

        /// <summary>
        /// The servers of a TALON_URL-style value, in the order calls try
        /// them: comma-separated absolute http(s) URLs, spaces and trailing
        /// slashes dropped. An empty entry or another scheme is an error.
        /// </summary>
        public static IReadOnlyList<Uri> ParseUrls(string raw)
        {
            if (raw == null)
                throw new InvalidArgumentException("no URL given");
            var urls = new List<Uri>();
            foreach (var part in raw.Split(','))
            {
                var s = part.Trim().TrimEnd('/');
                if (s.Length == 0)
                    throw new InvalidArgumentException("an empty URL in \"" + raw + "\"");
                Uri u;
                if (!Uri.TryCreate(s, UriKind.Absolute, out u) || (u.Scheme != "http" && u.Scheme != "https"))
                    throw new InvalidArgumentException("not an http(s) URL: \"" + s + "\"");
                if (!string.IsNullOrEmpty(u.Query) || !string.IsNullOrEmpty(u.Fragment))
                    throw new InvalidArgumentException("a server URL has no query or fragment: \"" + s + "\"");
                urls.Add(u);
            }
            return urls;
        }

        /// <summary>Checked settings; equal ones share one connection (see Connection.For).</summary>
        internal sealed class Resolved : IEquatable<Resolved>
        {
            public readonly string ApiKey;
            public readonly IReadOnlyList<Uri> Urls;
            public readonly TimeSpan RequestTimeout;
            public readonly HttpMessageHandler Handler;

            public Resolved(string apiKey, IReadOnlyList<Uri> urls, TimeSpan requestTimeout, HttpMessageHandler handler)
            {
                ApiKey = apiKey;
                Urls = urls;
                RequestTimeout = requestTimeout;
                Handler = handler;
            }

            /// <summary>The first server's URL, without a trailing slash: what paths are appended to.</summary>
            public string BaseUrl => Urls[0].ToString().TrimEnd('/');

            public bool Equals(Resolved other)
            {
                if (other == null || other.ApiKey != ApiKey || other.RequestTimeout != RequestTimeout
                    || !ReferenceEquals(other.Handler, Handler) || other.Urls.Count != Urls.Count)
                    return false;
                for (var i = 0; i < Urls.Count; i++)
                    if (other.Urls[i] != Urls[i])
                        return false;
                return true;
            }

            public override bool Equals(object obj) => Equals(obj as Resolved);

            public override int GetHashCode()
            {
                var h = ApiKey.GetHashCode() ^ RequestTimeout.GetHashCode();
                foreach (var u in Urls)
                    h = h * 31 + u.GetHashCode();
                return h;
            }
        }
    }
}
