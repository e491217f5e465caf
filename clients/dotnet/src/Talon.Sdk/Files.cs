using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Files: the sandbox's files. Relative paths are under /workspace,
    /// whoever the user is; `user` makes a call act as that user (E2B's
    /// default user is "user"; unset, the agent's own, root). Contents travel
    /// as raw bytes. An upload is not limited by the request timeout, and a
    /// download only until its first bytes come: big files take as long as
    /// they take, bounded by your CancellationToken.
    /// </summary>
    public sealed partial class Files
    {
        readonly Sandbox _s;

        internal Files(Sandbox sandbox)
        {
            _s = sandbox;
        }

        /// <summary>The file's content as UTF-8 text.</summary>
        public async Task<string> ReadTextAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var bytes = await ReadBytesAsync(path, user, cancellationToken).ConfigureAwait(false);
            return new UTF8Encoding(false).GetString(bytes);
        }

        /// <summary>The file's content.</summary>
        public async Task<byte[]> ReadBytesAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            using (var resp = await Read(path, user, cancellationToken).ConfigureAwait(false))
            using (cancellationToken.Register(resp.Dispose)) // how a body read is cancelled on netstandard2.0
            {
                try
                {
                    return await resp.Content.ReadAsByteArrayAsync().ConfigureAwait(false);
                }
                catch (Exception e) when (cancellationToken.IsCancellationRequested && !(e is OperationCanceledException))
                {
                    throw new OperationCanceledException("the read was cancelled", e, cancellationToken);
                }
                catch (Exception e) when (e is IOException || e is HttpRequestException)
                {
                    throw new UnavailableException("the download broke off: " + e.Message, inner: e);
                }
            }
        }

        /// <summary>
        /// The file's content as a stream read from the network as you read
        /// it, for files too big to hold. Dispose it to end the transfer.
        /// </summary>
        public async Task<Stream> OpenReadAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var resp = await Read(path, user, cancellationToken).ConfigureAwait(false);
            return new ResponseStream(resp, await resp.Content.ReadAsStreamAsync().ConfigureAwait(false));
        }

        /// <summary>The raw read, its body unread: the request timeout covers the wait for its headers only.</summary>
        Task<HttpResponseMessage> Read(string path, string user, CancellationToken cancellationToken)
        {
            var q = Wire.Query(new[] { Wire.Pair("path", Required(path)), Wire.Pair("user", Empty(user)) });
            return _s.Conn.SendAsync(HttpMethod.Get, Wire.SandboxPath(_s.SandboxId, "/files:read") + q, null, cancellationToken,
                stream: true, accept: "application/octet-stream");
        }

        /// <summary>Writes a whole file atomically (a temporary file, fsync, rename); text as UTF-8.</summary>
        public Task<EntryInfo> WriteAsync(string path, string text, WriteOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            WriteAsync(path, new UTF8Encoding(false).GetBytes(text ?? ""), options, cancellationToken);

        public Task<EntryInfo> WriteAsync(string path, byte[] data, WriteOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            Write(path, new ByteArrayContent(data ?? new byte[0]), options, cancellationToken);

        /// <summary>Writes a whole file from a stream, sent as it is read (not held in memory).</summary>
        public Task<EntryInfo> WriteAsync(string path, Stream data, WriteOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (data == null)
                throw new ArgumentNullException(nameof(data));
            return Write(path, new StreamContent(data), options, cancellationToken);
        }

        /// <summary>Writes several files, each atomically, in order; their infos in the same order.</summary>
        public async Task<IReadOnlyList<EntryInfo>> WriteFilesAsync(IEnumerable<WriteEntry> files, WriteOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var infos = new List<EntryInfo>();
            foreach (var f in files)
                infos.Add(await WriteAsync(f.Path, f.Data, options, cancellationToken).ConfigureAwait(false));
            return infos;
        }

        async Task<EntryInfo> Write(string path, HttpContent content, WriteOptions options, CancellationToken cancellationToken)
        {
            var o = options ?? new WriteOptions();
            content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            var q = Wire.Query(new[]
            {
                Wire.Pair("path", Required(path)),
                Wire.Pair("createParents", o.CreateParents ? "true" : "false"),
                Wire.Pair("mode", o.Mode != 0 ? o.Mode.ToString(System.Globalization.CultureInfo.InvariantCulture) : null),
                Wire.Pair("user", Empty(o.User)),
            });
            // Unlimited: the answer's headers come only after the whole upload.
            using (var resp = await _s.Conn.SendAsync(HttpMethod.Post, Wire.SandboxPath(_s.SandboxId, "/files:write") + q, content,
                cancellationToken, unlimited: true).ConfigureAwait(false))
            {
                var text = await resp.Content.ReadAsStringAsync().ConfigureAwait(false);
                M.WriteFileResponse r;
                try
                {
                    r = Wire.Parse<M.WriteFileResponse>(text);
                }
                catch (Newtonsoft.Json.JsonException e)
                {
                    throw new TalonException("the server answered a write with something that is not JSON: " + e.Message, inner: e);
                }
                return EntryInfo.Of(r == null ? null : r.Info);
            }
        }

        /// <summary>The entries of a directory, and below it to depth levels.</summary>
        public async Task<IReadOnlyList<EntryInfo>> ListAsync(string path = ".", int depth = 1, string user = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await _s.Conn.Call(ct => _s.Conn.Filesystem.FilesystemServiceListDirAsync(_s.SandboxId, Required(path), depth, Empty(user), ct),
                cancellationToken).ConfigureAwait(false);
            var list = new List<EntryInfo>();
            if (r != null && r.Entries != null)
                foreach (var e in r.Entries)
                    list.Add(EntryInfo.Of(e));
            return list;
        }

        /// <summary>What the path is; NotFoundException when there is nothing there.</summary>
        public async Task<EntryInfo> StatAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await _s.Conn.Call(ct => _s.Conn.Filesystem.FilesystemServiceStatAsync(_s.SandboxId, Required(path), Empty(user), ct),
                cancellationToken).ConfigureAwait(false);
            return EntryInfo.Of(r == null ? null : r.Info);
        }

        /// <summary>E2B's name for StatAsync.</summary>
        public Task<EntryInfo> GetInfoAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            StatAsync(path, user, cancellationToken);

        public async Task<bool> ExistsAsync(string path, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            try
            {
                await StatAsync(path, user, cancellationToken).ConfigureAwait(false);
                return true;
            }
            catch (NotFoundException)
            {
                return false;
            }
        }

        /// <summary>Makes a directory, and its missing parents unless told not to.</summary>
        public Task MakeDirAsync(string path, bool parents = true, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.MakeDirRequest(path: Required(path), parents: parents, user: Empty(user));
            return _s.Conn.Run(ct => _s.Conn.Filesystem.FilesystemServiceMakeDirAsync(_s.SandboxId, body, ct), cancellationToken);
        }

        public Task RenameAsync(string oldPath, string newPath, string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.MovePathRequest(sourcePath: Required(oldPath), destinationPath: Required(newPath), user: Empty(user));
            return _s.Conn.Run(ct => _s.Conn.Filesystem.FilesystemServiceMovePathAsync(_s.SandboxId, body, ct), cancellationToken);
        }

        /// <summary>Removes a file, or a directory (with what is in it only when recursive).</summary>
        public Task RemoveAsync(string path, bool recursive = false, string user = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Conn.Run(ct => _s.Conn.Filesystem.FilesystemServiceRemovePathAsync(_s.SandboxId, Required(path), recursive, Empty(user), ct),
                cancellationToken);

        static string Required(string path)
        {
            if (string.IsNullOrEmpty(path))
                throw new InvalidArgumentException("a path is required");
            return path;
        }

        static string Empty(string s) => string.IsNullOrEmpty(s) ? null : s;

        /// <summary>A response's body that disposes the response with it.</summary>
        sealed class ResponseStream : Stream
        {
            readonly HttpResponseMessage _resp;
            readonly Stream _inner;

            public ResponseStream(HttpResponseMessage resp, Stream inner)
            {
                _resp = resp;
                _inner = inner;
            }

            public override bool CanRead => true;
            public override bool CanSeek => false;
            public override bool CanWrite => false;
            public override long Length => throw new NotSupportedException();
            public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
            public override void Flush() { }
            public override int Read(byte[] buffer, int offset, int count) => _inner.Read(buffer, offset, count);

            public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
                _inner.ReadAsync(buffer, offset, count, cancellationToken);

            public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
            public override void SetLength(long value) => throw new NotSupportedException();
            public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

            protected override void Dispose(bool disposing)
            {
                if (disposing)
                {
                    _inner.Dispose();
                    _resp.Dispose();
                }
                base.Dispose(disposing);
            }
        }
    }
}
