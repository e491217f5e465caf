using System;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    // What a sandbox hands out: links to its ports (previews) and to its
    // files that open with no other credential, for a browser or a tool
    // that cannot send the API key. The Python SDK's get_host, preview_url,
    // preview_address, preview_token, download_url and upload_url.
    public sealed partial class Sandbox
    {
        /// <summary>
        /// A URL of the port that a browser opens directly: a signed preview
        /// link, as PreviewUrlAsync makes (E2B's getHost, which Talon signs
        /// because its previews are not public).
        /// </summary>
        public Task<string> GetHostAsync(int port, TimeSpan? ttl = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            PreviewUrlAsync(port, ttl, false, cancellationToken);

        /// <summary>
        /// A link to the port's preview that opens with no other credential:
        /// it carries a fresh preview token (valid for ttl, or the server's
        /// default), which the gateway trades for a cookie of that preview
        /// only. By default in the form the gateway serves, a subdomain
        /// (http://PORT-ID.localhost:8080/ on loopback), where apps with
        /// root-absolute asset paths work; path: true gives the path form
        /// (PreviewAddress with ?token=), for clients that cannot resolve
        /// *.localhost.
        /// </summary>
        public async Task<string> PreviewUrlAsync(int port, TimeSpan? ttl = null, bool path = false,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var t = await PreviewTokenAsync(port, ttl, cancellationToken).ConfigureAwait(false);
            if (path)
                return PreviewAddress(port) + "?token=" + Wire.Escape(t.Token);
            if (string.IsNullOrEmpty(t.Url))
                throw new TalonException("the server's preview token answer has no url");
            return t.Url;
        }

        /// <summary>
        /// The unsigned path-prefix address of a port's preview
        /// (BASE/preview/ID/PORT/), on the server calls go to now. It needs
        /// an Authorization header (the API key or a preview token), so it
        /// suits a client of your own rather than a browser; no call is made.
        /// </summary>
        public string PreviewAddress(int port) =>
            Conn.CurrentUrl + "/preview/" + Wire.Escape(SandboxId) + "/" + Port(port).ToString(CultureInfo.InvariantCulture) + "/";

        /// <summary>
        /// Signs a short-lived token for one port of the sandbox (ttl, or the
        /// server's default): the credential of a preview link, for building
        /// links of your own. Its Url is the subdomain link PreviewUrlAsync
        /// returns.
        /// </summary>
        public async Task<PreviewToken> PreviewTokenAsync(int port, TimeSpan? ttl = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.CreatePreviewTokenRequest(port: Port(port), ttl: Wire.Ttl(ttl));
            var r = await Conn.Call(ct => Conn.Previews.PreviewServiceCreatePreviewTokenAsync(SandboxId, body, ct), cancellationToken)
                .ConfigureAwait(false);
            return PreviewToken.Of(r);
        }

        /// <summary>
        /// A URL that downloads the file (its raw bytes) with a plain GET and
        /// no other credential, for ttl (the server's default: an hour; at
        /// most a day): to hand a file to a browser or another service.
        /// Relative paths are under /workspace.
        /// </summary>
        public Task<string> DownloadUrlAsync(string path, TimeSpan? ttl = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            FileUrl(path, M.CreateFileUrlRequest.OperationEnum.FILEURLOPERATIONREAD, ttl, cancellationToken);

        /// <summary>
        /// A URL that replaces the file with the body of a POST
        /// (Content-Type: application/octet-stream) and no other credential,
        /// making its parent directories, for ttl (the server's default: an
        /// hour): to let another service upload into the sandbox.
        /// </summary>
        public Task<string> UploadUrlAsync(string path, TimeSpan? ttl = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            FileUrl(path, M.CreateFileUrlRequest.OperationEnum.FILEURLOPERATIONWRITE, ttl, cancellationToken);

        async Task<string> FileUrl(string path, M.CreateFileUrlRequest.OperationEnum operation, TimeSpan? ttl, CancellationToken cancellationToken)
        {
            var body = new M.CreateFileUrlRequest(operation: operation, path: Wire.Required(path, "a path"), ttl: Wire.Ttl(ttl));
            var r = await Conn.Call(ct => Conn.Filesystem.FilesystemServiceCreateFileUrlAsync(SandboxId, body, ct), cancellationToken)
                .ConfigureAwait(false);
            if (r == null || string.IsNullOrEmpty(r.Url))
                throw new TalonException("the server's file URL answer has no url");
            return r.Url;
        }

        /// <summary>A TCP port, checked before anything is sent.</summary>
        static int Port(int port)
        {
            if (port < 1 || port > 65535)
                throw new InvalidArgumentException("a port is 1 to 65535, not " + port.ToString(CultureInfo.InvariantCulture));
            return port;
        }
    }

    /// <summary>
    /// A preview token of one port (Sandbox.PreviewTokenAsync): the token,
    /// the signed link that carries it, and when it stops working.
    /// </summary>
    public sealed class PreviewToken
    {
        public string Token { get; private set; }
        /// <summary>The subdomain link with the token (what PreviewUrlAsync returns).</summary>
        public string Url { get; private set; }
        public DateTimeOffset? ExpiresAt { get; private set; }

        internal static PreviewToken Of(M.CreatePreviewTokenResponse r)
        {
            if (r == null || string.IsNullOrEmpty(r.Token))
                throw new TalonException("the server's preview token answer has no token");
            return new PreviewToken { Token = r.Token, Url = r.Url ?? "", ExpiresAt = Wire.Time(r.ExpireTime) };
        }

        /// <summary>The token is a credential: it is left out.</summary>
        public override string ToString() => "PreviewToken(" + Url.Split('?')[0] + ", expires " + ExpiresAt + ")";
    }
}
