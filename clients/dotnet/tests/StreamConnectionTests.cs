using System;
using System.Diagnostics;
using System.Threading.Tasks;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// A stream the SDK stopped reading must not stall later calls: on Mono
    /// its connection is used once (Connection.OnMono). Before, a
    /// disconnected background command whose sandbox was then killed left
    /// its connection in Mono's pool, and a call made while another stream
    /// was open waited 30 s on it.
    /// </summary>
    [TestFixture]
    public class StreamConnectionTests
    {
        [Test]
        public async Task OnMonoAStreamsConnectionIsUsedOnceAndAUnaryCallsIsKept()
        {
            var fake = new FakeHandler(s => s.Uri.AbsolutePath.EndsWith("/processes")
                ? FakeHandler.Lines(Answers.Started(7), Answers.Exited(0))
                : Answers.Wrapped(Answers.Sandbox()));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)));
            Assert.AreNotEqual(true, fake.Last.ConnectionClose, "a unary call keeps its connection");
            await sbx.Commands.RunAsync("true");
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes", fake.Last.Uri.AbsolutePath);
            if (Type.GetType("Mono.Runtime") != null)
                Assert.AreEqual(true, fake.Last.ConnectionClose, "a stream's connection is not pooled on Mono");
            else
                Assert.AreNotEqual(true, fake.Last.ConnectionClose);
        }

        [Test]
        public async Task ADisconnectedStreamOfAKilledSandboxDoesNotStallTheNextCall()
        {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TALON_URL")))
                Assert.Ignore("TALON_URL is not set: live tests need a running gateway (talon up)");
            var a = await Sandbox.CreateAsync(new SandboxOptions { Timeout = TimeSpan.FromMinutes(2) });
            Sandbox b = null;
            try
            {
                var h = await a.Commands.StartAsync("sleep 600");
                h.Disconnect();
                await a.KillAsync();
                b = await Sandbox.CreateAsync(new SandboxOptions { Timeout = TimeSpan.FromMinutes(2) });
                var following = await b.Commands.StartAsync("sleep 600");
                var t = Stopwatch.StartNew();
                await Sandbox.ListAsync();
                await Sandbox.ListAsync();
                following.Disconnect();
                // 30 s before the fix; a few ms after.
                Assert.Less(t.Elapsed.TotalSeconds, 5, "two lists took " + t.Elapsed);
            }
            finally
            {
                await a.KillAsync();
                if (b != null)
                    await b.KillAsync();
            }
        }
    }
}
