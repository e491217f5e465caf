using System;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Against a running gateway (`talon up`): TALON_URL and TALON_API_KEY,
    /// as every SDK's live tests. Without TALON_URL they are ignored, so the
    /// offline build passes on machines with no platform.
    /// </summary>
    [TestFixture]
    public class LiveTests
    {
        Sandbox _sbx;

        static void NeedGateway()
        {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TALON_URL")))
                Assert.Ignore("TALON_URL is not set: live tests need a running gateway (talon up)");
        }

        // Synchronous: NUnit 2.6 does not await an async TearDown. Dispose kills it.
        [TearDown]
        public void KillIt()
        {
            if (_sbx != null)
                _sbx.Dispose();
            _sbx = null;
        }

        async Task<Sandbox> Create()
        {
            _sbx = await Sandbox.CreateAsync(new SandboxOptions
            {
                Timeout = TimeSpan.FromMinutes(5),
                Metadata = new System.Collections.Generic.Dictionary<string, string> { ["suite"] = "dotnet-live" },
            });
            return _sbx;
        }

        [Test]
        public async Task CreateRunsAndIsListed()
        {
            NeedGateway();
            var sbx = await Create();
            Assert.AreEqual(SandboxState.Running, sbx.Info.State);
            var info = await Sandbox.GetInfoAsync(sbx.SandboxId);
            Assert.AreEqual(sbx.SandboxId, info.SandboxId);
            var page = await Sandbox.ListAsync(new ListOptions
            {
                Metadata = new System.Collections.Generic.Dictionary<string, string> { ["suite"] = "dotnet-live" },
                States = new[] { SandboxState.Running },
            });
            Assert.IsTrue(page.Sandboxes.Any(s => s.SandboxId == sbx.SandboxId));
        }

        [Test]
        public async Task EchoHi()
        {
            NeedGateway();
            var sbx = await Create();
            var r = await sbx.Commands.RunAsync("echo hi");
            Assert.AreEqual("hi\n", r.Stdout);
            Assert.AreEqual(0, r.ExitCode);
            var e = await AssertAsync.Throws<CommandExitException>(() => sbx.Commands.RunAsync("echo no >&2; exit 3"));
            Assert.AreEqual(3, e.ExitCode);
            Assert.AreEqual("no\n", e.Stderr);
        }

        [Test]
        public async Task FilesRoundTrip()
        {
            NeedGateway();
            var sbx = await Create();
            await sbx.Files.WriteAsync("dir/a.txt", "héllo");
            Assert.AreEqual("héllo", await sbx.Files.ReadTextAsync("dir/a.txt"));
            var data = new byte[1 << 20];
            new Random(7).NextBytes(data);
            await sbx.Files.WriteAsync("dir/b.bin", data);
            using (var sha = SHA256.Create())
                CollectionAssert.AreEqual(sha.ComputeHash(data), sha.ComputeHash(await sbx.Files.ReadBytesAsync("dir/b.bin")));
            var names = (await sbx.Files.ListAsync("dir")).Select(e => e.Name).OrderBy(n => n).ToArray();
            Assert.AreEqual(new[] { "a.txt", "b.bin" }, names);
            Assert.IsTrue(await sbx.Files.ExistsAsync("dir/a.txt"));
            await sbx.Files.MakeDirAsync("dir/sub/deeper");
            Assert.IsTrue((await sbx.Files.StatAsync("dir/sub/deeper")).IsDir);
            await sbx.Files.RenameAsync("dir/a.txt", "dir/c.txt");
            await sbx.Files.RemoveAsync("dir", recursive: true);
            Assert.IsFalse(await sbx.Files.ExistsAsync("dir"));
        }

        [Test]
        public async Task UnknownSandboxIsATyped404()
        {
            NeedGateway();
            var e = await AssertAsync.Throws<NotFoundException>(() => Sandbox.GetInfoAsync("sbx-does-not-exist-" + Guid.NewGuid().ToString("N")));
            Assert.AreEqual(404, e.Status);
            Assert.AreEqual("NOT_FOUND", e.Code);
            Assert.IsFalse(await Sandbox.KillAsync("sbx-does-not-exist"));
        }

        [Test]
        public async Task ASnapshotForksAndStartsSandboxesWithItsFiles()
        {
            NeedGateway();
            var sbx = await Create();
            await sbx.Files.WriteAsync("kept.txt", "from the source");
            var snap = await sbx.CreateSnapshotAsync("dotnet-live");
            try
            {
                Assert.IsFalse(string.IsNullOrEmpty(snap.SnapshotId));
                Assert.AreEqual(sbx.SandboxId, snap.SandboxId);
                var forks = await sbx.ForkAsync(2);
                try
                {
                    Assert.AreEqual(2, forks.Count);
                    foreach (var f in forks)
                    {
                        Assert.AreNotEqual(sbx.SandboxId, f.SandboxId);
                        Assert.AreEqual("from the source", await f.Files.ReadTextAsync("kept.txt"));
                    }
                    // A fork's files are its own.
                    await forks[0].Files.WriteAsync("kept.txt", "changed");
                    Assert.AreEqual("from the source", await forks[1].Files.ReadTextAsync("kept.txt"));
                    Assert.AreEqual("from the source", await sbx.Files.ReadTextAsync("kept.txt"));
                }
                finally
                {
                    foreach (var f in forks)
                        await f.KillAsync();
                }
            }
            finally
            {
                await Sandbox.DeleteSnapshotAsync(snap.SnapshotId);
            }
            await AssertAsync.Throws<NotFoundException>(() => Sandbox.GetSnapshotAsync(snap.SnapshotId));
        }

        [Test]
        public async Task SignedFileUrlsWorkWithoutTheApiKey()
        {
            NeedGateway();
            var sbx = await Create();
            await sbx.Files.WriteAsync("shared.txt", "signed bytes");
            var down = await sbx.DownloadUrlAsync("shared.txt", TimeSpan.FromMinutes(1));
            using (var http = new System.Net.Http.HttpClient())
            {
                // No Authorization header: the URL is the credential.
                Assert.AreEqual("signed bytes", await http.GetStringAsync(down));
                // A write URL takes the file as a POST's octet-stream body.
                var up = await sbx.UploadUrlAsync("uploaded.txt", TimeSpan.FromMinutes(1));
                var body = new System.Net.Http.ByteArrayContent(Encoding.UTF8.GetBytes("put by url"));
                body.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
                var r = await http.PostAsync(up, body);
                Assert.IsTrue(r.IsSuccessStatusCode, "upload answered " + (int)r.StatusCode);
            }
            Assert.AreEqual("put by url", await sbx.Files.ReadTextAsync("uploaded.txt"));
        }
    }
}
