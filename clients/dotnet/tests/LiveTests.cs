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
    }
}
