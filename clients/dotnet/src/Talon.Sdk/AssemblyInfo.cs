using System.Runtime.CompilerServices;

// The offline tests reach the wire helpers and the failover handler directly.
[assembly: InternalsVisibleTo("Talon.Sdk.Tests")]
