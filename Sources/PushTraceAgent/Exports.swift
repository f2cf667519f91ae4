// The record vocabulary (ProcessKind, ResponseOption, EventName, CategoryConfig, …) is part of the agent's API: an
// app that imports PushTraceAgent gets it without importing the module it lives in.
@_exported import PushTraceRecords
