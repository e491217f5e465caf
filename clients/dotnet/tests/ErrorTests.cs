using System;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>An error answer (HTTP status and JSON body) becomes its typed exception.</summary>
    [TestFixture]
    public class ErrorTests
    {
        static string Body(int code, string message) => new JObject { ["code"] = code, ["message"] = message }.ToString();

        [Test]
        public void GatewayBodyCodeNamesTheType()
        {
            var cases = new[]
            {
                Tuple.Create(400, 3, typeof(InvalidArgumentException), "INVALID_ARGUMENT"),
                Tuple.Create(401, 16, typeof(AuthenticationException), "UNAUTHENTICATED"),
                Tuple.Create(403, 7, typeof(PermissionDeniedException), "PERMISSION_DENIED"),
                Tuple.Create(404, 5, typeof(NotFoundException), "NOT_FOUND"),
                Tuple.Create(409, 6, typeof(AlreadyExistsException), "ALREADY_EXISTS"),
                Tuple.Create(409, 10, typeof(ConflictException), "ABORTED"),
                Tuple.Create(429, 8, typeof(RateLimitException), "RESOURCE_EXHAUSTED"),
                Tuple.Create(400, 9, typeof(FailedPreconditionException), "FAILED_PRECONDITION"),
                Tuple.Create(400, 11, typeof(InvalidArgumentException), "INVALID_ARGUMENT"),
                Tuple.Create(499, 1, typeof(CancelledException), "CANCELLED"),
                Tuple.Create(500, 13, typeof(InternalException), "INTERNAL"),
                Tuple.Create(501, 12, typeof(UnimplementedException), "UNIMPLEMENTED"),
                Tuple.Create(503, 14, typeof(UnavailableException), "UNAVAILABLE"),
                Tuple.Create(504, 4, typeof(TalonTimeoutException), "DEADLINE_EXCEEDED"),
            };
            foreach (var c in cases)
            {
                var e = ErrorMap.FromBody(c.Item1, Body(c.Item2, "m" + c.Item2), "req-" + c.Item2);
                Assert.AreEqual(c.Item3, e.GetType(), "code " + c.Item2);
                Assert.AreEqual(c.Item4, e.Code);
                Assert.AreEqual(c.Item1, e.Status);
                Assert.AreEqual("m" + c.Item2, e.Message);
                Assert.AreEqual("req-" + c.Item2, e.RequestId);
            }
        }

        [Test]
        public void TheBodyCodeWinsOverTheStatus()
        {
            Assert.IsInstanceOf<FailedPreconditionException>(ErrorMap.FromBody(409, Body(9, "paused")));
        }

        [Test]
        public void WithoutTheGatewaysBodyTheStatusDecides()
        {
            Assert.IsInstanceOf<AuthenticationException>(ErrorMap.FromBody(401, "<html>no</html>"));
            Assert.IsInstanceOf<PermissionDeniedException>(ErrorMap.FromBody(403, ""));
            Assert.IsInstanceOf<NotFoundException>(ErrorMap.FromBody(404, "404 page not found"));
            Assert.IsInstanceOf<ConflictException>(ErrorMap.FromBody(409, null));
            Assert.IsInstanceOf<RateLimitException>(ErrorMap.FromBody(429, "slow down"));
            Assert.IsInstanceOf<UnavailableException>(ErrorMap.FromBody(503, "{\"error\": \"upstream\"}"));
            Assert.IsInstanceOf<TalonTimeoutException>(ErrorMap.FromBody(504, "gateway timeout"));
            Assert.IsInstanceOf<InternalException>(ErrorMap.FromBody(502, "bad gateway"));
            var other = ErrorMap.FromBody(418, "teapot");
            Assert.AreEqual(typeof(TalonException), other.GetType());
            Assert.AreEqual("UNKNOWN", other.Code);
            StringAssert.Contains("HTTP 418: teapot", other.Message);
        }

        [Test]
        public void AnUnmappedCodeKeepsItsName()
        {
            var e = ErrorMap.FromBody(500, Body(15, "lost"));
            Assert.AreEqual(typeof(TalonException), e.GetType());
            Assert.AreEqual("DATA_LOSS", e.Code);
        }

        [Test]
        public void DetailsAreKept()
        {
            var body = new JObject
            {
                ["code"] = 4,
                ["message"] = "not running in time",
                ["details"] = new JArray(new JObject { ["@type"] = "type.googleapis.com/talon.v1.SandboxStateDetail", ["state"] = "SANDBOX_STATE_STARTING" }),
            };
            var e = ErrorMap.FromBody(504, body.ToString());
            Assert.AreEqual(1, e.Details.Count);
            Assert.AreEqual("SANDBOX_STATE_STARTING", (string)e.Details[0]["state"]);
        }

        [Test]
        public void CommandExitCarriesTheResult()
        {
            var r = new CommandResult(new byte[] { 0x6f, 0x6b }, System.Text.Encoding.UTF8.GetBytes("boom"), 3);
            var e = new CommandExitException(r);
            Assert.AreEqual(3, e.ExitCode);
            Assert.AreEqual("ok", e.Stdout);
            Assert.AreEqual("COMMAND_EXIT", e.Code);
            StringAssert.Contains("exit code 3: boom", e.Message);
            Assert.IsInstanceOf<TalonTimeoutException>(new CommandTimeoutException(r, TimeSpan.FromSeconds(1.5)));
        }

        // Through the SDK: the generated layer's and the SDK's own requests map alike.

        [Test]
        public async Task NotFoundThroughTheGeneratedLayer()
        {
            var fake = new FakeHandler(s => Answers.Error(404, 5, "sandbox sbx-9 not found", "req-404"));
            var e = await AssertAsync.Throws<NotFoundException>(() => Sandbox.GetInfoAsync("sbx-9", Opt.Over(fake)));
            Assert.AreEqual(404, e.Status);
            Assert.AreEqual("req-404", e.RequestId);
            Assert.AreEqual("sandbox sbx-9 not found", e.Message);
            Assert.AreEqual("/v1/sandboxes/sbx-9", fake.Last.Uri.AbsolutePath);
            Assert.AreEqual("Bearer key-1", fake.Last.Authorization);
        }

        [Test]
        public async Task TypedErrorsOfEveryStatusTheIssueNames()
        {
            var cases = new[]
            {
                Tuple.Create(401, 16, typeof(AuthenticationException)),
                Tuple.Create(403, 7, typeof(PermissionDeniedException)),
                Tuple.Create(404, 5, typeof(NotFoundException)),
                Tuple.Create(409, 10, typeof(ConflictException)),
                Tuple.Create(429, 8, typeof(RateLimitException)),
            };
            foreach (var c in cases)
            {
                var fake = new FakeHandler(s => Answers.Error(c.Item1, c.Item2, "no"));
                var e = await AssertAsync.Throws<TalonException>(() => Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake))));
                Assert.AreEqual(c.Item3, e.GetType(), "HTTP " + c.Item1);
                Assert.AreEqual(c.Item1, e.Status);
            }
        }

        [Test]
        public async Task ErrorsOfTheSdksOwnRequests()
        {
            var fake = new FakeHandler(s => FakeHandler.Json("<html>Too Many Requests</html>", 429, "req-429"));
            var e = await AssertAsync.Throws<RateLimitException>(() => Sandbox.ListAsync(new ListOptions(Opt.Over(fake))));
            Assert.AreEqual("req-429", e.RequestId);
        }

        [Test]
        public async Task AStreamsErrorLineRaises()
        {
            var fake = new FakeHandler(s => s.Method == System.Net.Http.HttpMethod.Get
                ? Answers.Wrapped(Answers.Sandbox())
                : FakeHandler.Lines(Answers.Started(7), new JObject { ["error"] = new JObject { ["code"] = 14, ["message"] = "worker lost" } }));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)));
            var e = await AssertAsync.Throws<UnavailableException>(() => sbx.Commands.RunAsync("sleep 100"));
            Assert.AreEqual("worker lost", e.Message);
        }

        [Test]
        public async Task AnAnswerThatIsNotJsonIsAnError()
        {
            var fake = new FakeHandler(s => FakeHandler.Json("<html>login</html>", 200));
            await AssertAsync.Throws<TalonException>(() => Sandbox.GetInfoAsync("sbx-1", Opt.Over(fake)));
        }

        [Test]
        public async Task TheRequestTimeoutIsATimeoutAndCancellingIsNot()
        {
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox())) { Delay = TimeSpan.FromSeconds(5) };
            var o = Opt.Over(fake);
            o.RequestTimeout = TimeSpan.FromMilliseconds(100);
            await AssertAsync.Throws<TalonTimeoutException>(() => Sandbox.GetInfoAsync("sbx-1", o));
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(100)))
            {
                var e = await AssertAsync.Throws<OperationCanceledException>(() => Sandbox.GetInfoAsync("sbx-1", Opt.Over(fake), cts.Token));
                Assert.IsNotInstanceOf<TalonException>(e);
            }
        }
    }
}
