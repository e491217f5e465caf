using System.Threading;

namespace Talon
{
    // The sandbox's agent runs (Agents.cs): the Python SDK's `sbx.agent`.
    // A part of its own so that Sandbox.cs need not know of them.
    public sealed partial class Sandbox
    {
        Agent _agent;

        /// <summary>
        /// Agent runs: a coding agent started with a prompt on its stdin,
        /// whose output lines, workspace changes and end stream back, and
        /// which outlives the connection (see <see cref="Talon.Agent"/>).
        /// Made on first use: most sandboxes never run one.
        /// </summary>
        public Agent Agent => LazyInitializer.EnsureInitialized(ref _agent, () => new Agent(this));
    }
}
