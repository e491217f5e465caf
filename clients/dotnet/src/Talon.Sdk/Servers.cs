using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace Talon
{
    /// <summary>
    /// Several servers of one platform, with the rule of the other SDKs
    /// (docs/sdks.md, "Several servers"): requests go to the current server.
    /// One that could not connect there (it reached no server) is sent to the
    /// next ones in turn, and the first that answers becomes current. One
    /// that failed after it was sent is not resent, since a create may have
    /// happened: it fails with UnavailableException, but the next call goes
    /// to the next server, so a retry reaches a live one. With one server,
    /// only the mapping of connection failures to UnavailableException is
    /// left, so that callers catch TalonException alone.
    /// </summary>
    internal sealed class FailoverHandler : DelegatingHandler
    {
        readonly IReadOnlyList<Uri> _urls;
        int _current;

        public FailoverHandler(IReadOnlyList<Uri> urls, HttpMessageHandler inner) : base(inner)
        {
            if (urls == null || urls.Count == 0)
                throw new ArgumentException("no servers", nameof(urls));
            _urls = urls;
        }

        /// <summary>The server calls go to now (an index into the URLs).</summary>
        public int Current => Volatile.Read(ref _current);

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var n = _urls.Count;
            var start = Current;
            var original = request.RequestUri;
            for (var k = 0; k < n; k++)
            {
                var i = (start + k) % n;
                request.RequestUri = At(original, i);
                try
                {
                    var resp = await base.SendAsync(request, cancellationToken).ConfigureAwait(false);
                    Volatile.Write(ref _current, i);
                    return resp;
                }
                catch (Exception e) when (IsTransport(e) && !cancellationToken.IsCancellationRequested)
                {
                    // The next server becomes current; a request that reached
                    // no server goes on to it, any other fails now.
                    if (n > 1)
                        Interlocked.CompareExchange(ref _current, (i + 1) % n, i);
                    if (!IsUnsent(e) || k == n - 1)
                        throw Unreachable(e, _urls[i]);
                }
            }
            throw new InvalidOperationException("unreachable");
        }

        /// <summary>
        /// The request's URL moved from the first server to server i: the
        /// scheme, host and port are i's, and the path below the first's
        /// prefix is put below i's (http://a/x/v1/... to http://b/y/v1/...).
        /// </summary>
        internal Uri At(Uri url, int i)
        {
            if (i == 0 || !url.IsAbsoluteUri)
                return url;
            var first = _urls[0];
            var to = _urls[i];
            var path = url.AbsolutePath;
            var prefix = first.AbsolutePath.TrimEnd('/');
            var rest = prefix.Length > 0 && path.StartsWith(prefix, StringComparison.Ordinal) ? path.Substring(prefix.Length) : path;
            var b = new UriBuilder(to.Scheme, to.Host, to.Port, to.AbsolutePath.TrimEnd('/') + rest);
            var q = url.Query;
            if (q.Length > 1)
                b.Query = q.Substring(1);
            return b.Uri;
        }

        static bool IsTransport(Exception e) => e is HttpRequestException || e is WebException || e is SocketException
            || e is TaskCanceledException || e is System.IO.IOException;

        /// <summary>
        /// Whether the request reached no server: it failed while resolving
        /// the name or connecting (a socket error of those, in the chain of
        /// .NET's and Mono's HttpClientHandler, or WebException's statuses on
        /// .NET Framework). A connection reset or a timeout after sending may
        /// have reached one, so they are not resent.
        /// </summary>
        internal static bool IsUnsent(Exception e)
        {
            for (var x = e; x != null; x = x.InnerException)
            {
                var s = x as SocketException;
                if (s != null)
                {
                    switch (s.SocketErrorCode)
                    {
                        case SocketError.ConnectionRefused:
                        case SocketError.HostNotFound:
                        case SocketError.HostUnreachable:
                        case SocketError.NetworkUnreachable:
                        case SocketError.HostDown:
                        case SocketError.NetworkDown:
                        case SocketError.TryAgain:
                        case SocketError.NoData:
                        case SocketError.AddressNotAvailable:
                        case SocketError.TimedOut: // connecting: reads have no socket timeout
                            return true;
                        default:
                            return false;
                    }
                }
                var w = x as WebException;
                if (w != null && (w.Status == WebExceptionStatus.ConnectFailure || w.Status == WebExceptionStatus.NameResolutionFailure
                    || w.Status == WebExceptionStatus.ProxyNameResolutionFailure))
                    return true;
            }
            return false;
        }

        /// <summary>As the Python SDK: a connection that timed out is a timeout, any other failure UNAVAILABLE.</summary>
        static TalonException Unreachable(Exception e, Uri url)
        {
            var inner = Innermost(e);
            var s = inner as SocketException;
            if (s != null && s.SocketErrorCode == SocketError.TimedOut)
                return new TalonTimeoutException(Strip(url) + ": no answer in time (" + inner.Message + ")", inner: e);
            return new UnavailableException("cannot reach Talon at " + Strip(url) + ": " + inner.Message, inner: e);
        }

        static Exception Innermost(Exception e)
        {
            while (e.InnerException != null)
                e = e.InnerException;
            return e;
        }

        static string Strip(Uri u) => u.ToString().TrimEnd('/');
    }
}
