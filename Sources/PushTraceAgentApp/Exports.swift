// The app's product: everything of the extension-safe PushTraceAgent, plus what only an app may call (UIApplication's
// background time, BGTaskScheduler). An app imports this module; its extensions import PushTraceAgent.
@_exported import PushTraceAgent
