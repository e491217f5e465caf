using System.Threading;

namespace Talon
{
    // The sandbox's terminals (Pty.cs): sbx.Pty, made when first used.
    public sealed partial class Sandbox
    {
        Pty _pty;

        /// <summary>
        /// Terminals: processes under a PTY over the gateway's WebSocket
        /// (create, attach, type, resize, kill). Made on first use, so
        /// sandboxes that never open one pay nothing for it.
        /// </summary>
        public Pty Pty => LazyInitializer.EnsureInitialized(ref _pty, () => new Pty(this));
    }
}
