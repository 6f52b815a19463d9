/*
 * knownschemas.c - built-in schemas (see knownschemas.h) as compact
 * tables: one row per (provider, event id, version) with the event's
 * name as TraceEvent gives it ("GC/Start") and its fields in payload
 * order, written "Name:type" ("Reason:u32=GCReason" maps the value,
 * "Stack:ptr[FrameCount]" is an array counted by an earlier field).
 * The layouts are facts from the providers' public manifests and
 * TraceEvent's parsers; ks_load() turns each row into a TRACE_EVENT_INFO
 * blob (lib/etl/tdhbuild.c), so that built-in and embedded schemas go
 * through one decoder.  Versions not listed stay undecoded (hex), never
 * guessed; a later version's extra trailing fields are left out.
 */
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "etl/knownschemas.h"
#include "etl/tdhbuild.h"

enum { CLR, CLR_RUNDOWN, K_PROCESS, K_FILE, K_DISK, K_NETWORK, NPROV };

static const struct {
	const char *guid, *name;
} providers[NPROV] = {
	[CLR] = { "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "Microsoft-Windows-DotNETRuntime" },
	[CLR_RUNDOWN] = { "a669021c-c450-4609-a035-5af59af4df18", "Microsoft-Windows-DotNETRuntimeRundown" },
	[K_PROCESS] = { "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "Microsoft-Windows-Kernel-Process" },
	[K_FILE] = { "edd08927-9cc4-4e65-b970-c2560fb5c289", "Microsoft-Windows-Kernel-File" },
	[K_DISK] = { "c7bde69a-e1e0-4177-b6ef-283ad1525271", "Microsoft-Windows-Kernel-Disk" },
	[K_NETWORK] = { "7dd42a49-5329-4832-8dfd-43d979153a88", "Microsoft-Windows-Kernel-Network" },
};

struct ks_row {
	uint8_t prov;
	uint16_t id;
	uint8_t version, opcode;
	uint16_t task;
	const char *name, *fields;
};

/* Field lists shared by several rows. */
#define GC_START_V1 "Count:u32 Depth:u32 Reason:u32=GCReason Type:u32=GCType ClrInstanceID:u16"
#define HEAPSTATS_V1 "GenerationSize0:u64 TotalPromotedSize0:u64 GenerationSize1:u64 " \
	"TotalPromotedSize1:u64 GenerationSize2:u64 TotalPromotedSize2:u64 GenerationSize3:u64 " \
	"TotalPromotedSize3:u64 FinalizationPromotedSize:u64 FinalizationPromotedCount:u64 " \
	"PinnedObjectCount:u32 SinkBlockCount:u32 GCHandleCount:u32 ClrInstanceID:u16"
#define ALLOC_V1 "AllocationAmount:u32 AllocationKind:u32=GCAllocationKind ClrInstanceID:u16"
#define ALLOC_V2 ALLOC_V1 " AllocationAmount64:u64 TypeID:ptr TypeName:ustr HeapIndex:u32"
#define METHOD_V0 "MethodID:x64 ModuleID:x64 MethodStartAddress:x64 MethodSize:u32 MethodToken:x32 " \
	"MethodFlags:u32=MethodFlags"
#define METHOD_VERBOSE_V0 METHOD_V0 " MethodNamespace:ustr MethodName:ustr MethodSignature:ustr"
#define JIT_START_V0 "MethodID:x64 ModuleID:x64 MethodToken:x32 MethodILSize:u32 MethodNamespace:ustr " \
	"MethodName:ustr MethodSignature:ustr"
#define MODULE_V1 "ModuleID:x64 AssemblyID:x64 ModuleFlags:u32=ModuleFlags Reserved1:u32 " \
	"ModuleILPath:ustr ModuleNativePath:ustr ClrInstanceID:u16"
#define MODULE_V2 MODULE_V1 " ManagedPdbSignature:guid ManagedPdbAge:u32 ManagedPdbBuildPath:ustr " \
	"NativePdbSignature:guid NativePdbAge:u32 NativePdbBuildPath:ustr"
#define DOMAIN_MODULE_V1 "ModuleID:x64 AssemblyID:x64 AppDomainID:x64 ModuleFlags:u32=ModuleFlags " \
	"Reserved1:u32 ModuleILPath:ustr ModuleNativePath:ustr ClrInstanceID:u16"
#define ASSEMBLY_V1 "AssemblyID:x64 AppDomainID:x64 BindingID:x64 AssemblyFlags:u32=AssemblyFlags " \
	"FullyQualifiedAssemblyName:ustr ClrInstanceID:u16"
#define APPDOMAIN_V1 "AppDomainID:x64 AppDomainFlags:u32=AppDomainFlags AppDomainName:ustr " \
	"AppDomainIndex:u32 ClrInstanceID:u16"
#define TP_WORKER "ActiveWorkerThreadCount:u32 RetiredWorkerThreadCount:u32 ClrInstanceID:u16"
#define RUNTIME_INFO "ClrInstanceID:u16 Sku:u16=RuntimeSku BclMajorVersion:u16 BclMinorVersion:u16 " \
	"BclBuildNumber:u16 BclQfeNumber:u16 VMMajorVersion:u16 VMMinorVersion:u16 VMBuildNumber:u16 " \
	"VMQfeNumber:u16 StartupFlags:u32 StartupMode:u8=StartupMode CommandLine:ustr ComObjectGuid:guid " \
	"RuntimeDllPath:ustr"
#define K_THREAD "ProcessID:u32 ThreadID:u32 StackBase:ptr StackLimit:ptr UserStackBase:ptr " \
	"UserStackLimit:ptr StartAddr:ptr Win32StartAddr:ptr TebBase:ptr SubProcessTag:x32"
#define K_IMAGE "ImageBase:ptr ImageSize:ptr ProcessID:u32 ImageCheckSum:u32 TimeDateStamp:u32 " \
	"DefaultBase:ptr ImageName:ustr"
#define K_DISKIO "DiskNumber:u32 IrpFlags:x32 TransferSize:u32 Reserved:u32 ByteOffset:u64 " \
	"FileObject:ptr Irp:ptr HighResResponseTime:u64 IssuingThreadId:u32"
#define K_FILEIO "ByteOffset:u64 Irp:ptr FileObject:ptr FileKey:ptr IssuingThreadId:u32 IOSize:u32 " \
	"IOFlags:x32"
#define K_TCP "PID:u32 size:u32 daddr:ip4 saddr:ip4 dport:port sport:port"

static const struct ks_row rows[] = {
	/* CLR: GC (task 1) */
	{ CLR, 1, 0, 1, 1, "GC/Start", "Count:u32 Reason:u32=GCReason" },
	{ CLR, 1, 1, 1, 1, "GC/Start", GC_START_V1 },
	{ CLR, 1, 2, 1, 1, "GC/Start", GC_START_V1 " ClientSequenceNumber:u64" },
	{ CLR, 2, 0, 2, 1, "GC/Stop", "Count:u32 Depth:u16" },
	{ CLR, 2, 1, 2, 1, "GC/Stop", "Count:u32 Depth:u32 ClrInstanceID:u16" },
	{ CLR, 3, 1, 132, 1, "GC/RestartEEStop", "ClrInstanceID:u16" },
	{ CLR, 4, 1, 133, 1, "GC/HeapStats", HEAPSTATS_V1 },
	{ CLR, 4, 2, 133, 1, "GC/HeapStats", HEAPSTATS_V1 " GenerationSize4:u64 TotalPromotedSize4:u64" },
	{ CLR, 5, 1, 134, 1, "GC/CreateSegment", "Address:x64 Size:x64 Type:u32=GCSegmentType ClrInstanceID:u16" },
	{ CLR, 6, 1, 135, 1, "GC/FreeSegment", "Address:x64 ClrInstanceID:u16" },
	{ CLR, 7, 1, 136, 1, "GC/RestartEEStart", "ClrInstanceID:u16" },
	{ CLR, 8, 1, 137, 1, "GC/SuspendEEStop", "ClrInstanceID:u16" },
	{ CLR, 9, 1, 10, 1, "GC/SuspendEEStart", "Reason:u32=GCSuspendEEReason Count:u32 ClrInstanceID:u16" },
	{ CLR, 10, 1, 11, 1, "GC/AllocationTick", ALLOC_V1 },
	{ CLR, 10, 2, 11, 1, "GC/AllocationTick", ALLOC_V2 },
	{ CLR, 10, 3, 11, 1, "GC/AllocationTick", ALLOC_V2 " Address:ptr" },
	{ CLR, 10, 4, 11, 1, "GC/AllocationTick", ALLOC_V2 " Address:ptr ObjectSize:u64" },
	{ CLR, 11, 1, 12, 1, "GC/CreateConcurrentThread", "ClrInstanceID:u16" },
	{ CLR, 12, 1, 13, 1, "GC/TerminateConcurrentThread", "ClrInstanceID:u16" },
	{ CLR, 13, 1, 15, 1, "GC/FinalizersStop", "Count:u32 ClrInstanceID:u16" },
	{ CLR, 14, 1, 19, 1, "GC/FinalizersStart", "ClrInstanceID:u16" },
	{ CLR, 29, 0, 32, 1, "GC/FinalizeObject", "TypeID:ptr ObjectID:ptr ClrInstanceID:u16" },
	{ CLR, 33, 0, 46, 1, "GC/PinObjectAtGCTime",
	    "HandleID:ptr ObjectID:ptr ObjectSize:u64 TypeName:ustr ClrInstanceID:u16" },
	{ CLR, 35, 0, 35, 1, "GC/Triggered", "Reason:u32=GCReason ClrInstanceID:u16" },
	{ CLR, 202, 0, 202, 1, "GC/MarkWithType", "HeapNum:u32 ClrInstanceID:u16 Type:u32 Promoted:u64" },
	/* CLR: thread pool (task 16), contention (8), exceptions (7), stacks (11), runtime (19) */
	{ CLR, 50, 0, 1, 16, "ThreadPoolWorkerThread/Start", TP_WORKER },
	{ CLR, 51, 0, 2, 16, "ThreadPoolWorkerThread/Stop", TP_WORKER },
	{ CLR, 57, 0, 90, 16, "ThreadPoolWorkerThread/Wait", TP_WORKER },
	{ CLR, 54, 0, 100, 18, "ThreadPoolWorkerThreadAdjustment/Sample", "Throughput:dbl ClrInstanceID:u16" },
	{ CLR, 55, 0, 101, 18, "ThreadPoolWorkerThreadAdjustment/Adjustment",
	    "AverageThroughput:dbl NewWorkerThreadCount:u32 Reason:u32 ClrInstanceID:u16" },
	{ CLR, 81, 1, 1, 8, "Contention/Start", "ContentionFlags:u8 ClrInstanceID:u16" },
	{ CLR, 91, 0, 2, 8, "Contention/Stop", "ContentionFlags:u8 ClrInstanceID:u16" },
	{ CLR, 80, 1, 1, 7, "Exception/Start", "ExceptionType:ustr ExceptionMessage:ustr ExceptionEIP:ptr "
	    "ExceptionHRESULT:x32 ExceptionFlags:u16=ExceptionThrownFlags ClrInstanceID:u16" },
	{ CLR, 82, 0, 82, 11, "ClrStack/Walk",
	    "ClrInstanceID:u16 Reserved1:u8 Reserved2:u8 FrameCount:u32 Stack:ptr[FrameCount]" },
	{ CLR, 187, 0, 1, 19, "Runtime/Start", RUNTIME_INFO },
	/* CLR: methods (task 9) */
	{ CLR, 141, 0, 33, 9, "Method/Load", METHOD_V0 },
	{ CLR, 141, 1, 33, 9, "Method/Load", METHOD_V0 " ClrInstanceID:u16" },
	{ CLR, 141, 2, 33, 9, "Method/Load", METHOD_V0 " ClrInstanceID:u16 ReJITID:u64" },
	{ CLR, 143, 0, 37, 9, "Method/LoadVerbose", METHOD_VERBOSE_V0 },
	{ CLR, 143, 1, 37, 9, "Method/LoadVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16" },
	{ CLR, 143, 2, 37, 9, "Method/LoadVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16 ReJITID:u64" },
	{ CLR, 144, 1, 38, 9, "Method/UnloadVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16" },
	{ CLR, 144, 2, 38, 9, "Method/UnloadVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16 ReJITID:u64" },
	{ CLR, 145, 0, 42, 9, "Method/JittingStarted", JIT_START_V0 },
	/* CLR: the loader (task 10) */
	{ CLR, 151, 1, 45, 10, "Loader/DomainModuleLoad", DOMAIN_MODULE_V1 },
	{ CLR, 152, 1, 33, 10, "Loader/ModuleLoad", MODULE_V1 },
	{ CLR, 152, 2, 33, 10, "Loader/ModuleLoad", MODULE_V2 },
	{ CLR, 153, 1, 34, 10, "Loader/ModuleUnload", MODULE_V1 },
	{ CLR, 153, 2, 34, 10, "Loader/ModuleUnload", MODULE_V2 },
	{ CLR, 154, 1, 37, 10, "Loader/AssemblyLoad", ASSEMBLY_V1 },
	{ CLR, 155, 1, 38, 10, "Loader/AssemblyUnload", ASSEMBLY_V1 },
	{ CLR, 156, 1, 41, 10, "Loader/AppDomainLoad", APPDOMAIN_V1 },
	{ CLR, 157, 1, 42, 10, "Loader/AppDomainUnload", APPDOMAIN_V1 },
	{ CLR, 145, 1, 42, 9, "Method/JittingStarted", JIT_START_V0 " ClrInstanceID:u16" },
	/* CLR rundown: methods (task 1), runtime (19) */
	{ CLR_RUNDOWN, 143, 1, 39, 1, "Method/DCStartVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16" },
	{ CLR_RUNDOWN, 143, 2, 39, 1, "Method/DCStartVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16 ReJITID:u64" },
	{ CLR_RUNDOWN, 144, 1, 40, 1, "Method/DCStopVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16" },
	{ CLR_RUNDOWN, 144, 2, 40, 1, "Method/DCStopVerbose", METHOD_VERBOSE_V0 " ClrInstanceID:u16 ReJITID:u64" },
	{ CLR_RUNDOWN, 146, 1, 15, 1, "Method/DCStopComplete", "ClrInstanceID:u16" },
	{ CLR_RUNDOWN, 148, 1, 17, 1, "Method/DCStopInit", "ClrInstanceID:u16" },
	{ CLR_RUNDOWN, 187, 0, 1, 19, "Runtime/Start", RUNTIME_INFO },
	{ CLR_RUNDOWN, 10, 0, 10, 1, "GC/SettingsRundown", "HardLimit:u64 LOHThreshold:u64 "
	    "PhysicalMemoryConfig:u64 Gen0MinBudgetConfig:u64 Gen0MaxBudgetConfig:u64 HighMemPercentConfig:u32 "
	    "BitSettings:x32 ClrInstanceID:u16" },
	{ CLR_RUNDOWN, 280, 0, 11, 31, "TieredCompilationRundown/SettingsDCStart", "ClrInstanceID:u16 Flags:x32" },
	/* CLR rundown: the loader (task 2) */
	{ CLR_RUNDOWN, 151, 1, 46, 2, "Loader/DomainModuleDCStart", DOMAIN_MODULE_V1 },
	{ CLR_RUNDOWN, 152, 1, 47, 2, "Loader/DomainModuleDCStop", DOMAIN_MODULE_V1 },
	{ CLR_RUNDOWN, 153, 1, 35, 2, "Loader/ModuleDCStart", MODULE_V1 },
	{ CLR_RUNDOWN, 153, 2, 35, 2, "Loader/ModuleDCStart", MODULE_V2 },
	{ CLR_RUNDOWN, 154, 1, 36, 2, "Loader/ModuleDCStop", MODULE_V1 },
	{ CLR_RUNDOWN, 154, 2, 36, 2, "Loader/ModuleDCStop", MODULE_V2 },
	{ CLR_RUNDOWN, 155, 1, 39, 2, "Loader/AssemblyDCStart", ASSEMBLY_V1 },
	{ CLR_RUNDOWN, 156, 1, 40, 2, "Loader/AssemblyDCStop", ASSEMBLY_V1 },
	{ CLR_RUNDOWN, 157, 1, 43, 2, "Loader/AppDomainDCStart", APPDOMAIN_V1 },
	{ CLR_RUNDOWN, 158, 1, 44, 2, "Loader/AppDomainDCStop", APPDOMAIN_V1 },
	/* Kernel-Process: the process named in the payload (ks_subject_pid) */
	{ K_PROCESS, 1, 0, 1, 1, "ProcessStart/Start",
	    "ProcessID:u32 CreateTime:ft ParentProcessID:u32 SessionID:u32 ImageName:ustr" },
	{ K_PROCESS, 1, 1, 1, 1, "ProcessStart/Start",
	    "ProcessID:u32 CreateTime:ft ParentProcessID:u32 SessionID:u32 Flags:x32 ImageName:ustr" },
	{ K_PROCESS, 1, 2, 1, 1, "ProcessStart/Start",
	    "ProcessID:u32 CreateTime:ft ParentProcessID:u32 SessionID:u32 Flags:x32 ImageName:ustr "
	    "ImageChecksum:x32 TimeDateStamp:u32 PackageFullName:ustr PackageRelativeAppId:ustr" },
	{ K_PROCESS, 2, 0, 2, 2, "ProcessStop/Stop",
	    "ProcessID:u32 CreateTime:ft ExitTime:ft ExitCode:u32 TokenElevationType:u32 HandleCount:u32 "
	    "CommitCharge:u64 CommitPeak:u64 ImageName:astr" },
	{ K_PROCESS, 2, 1, 2, 2, "ProcessStop/Stop",
	    "ProcessID:u32 CreateTime:ft ExitTime:ft ExitCode:u32 TokenElevationType:u32 HandleCount:u32 "
	    "CommitCharge:u64 CommitPeak:u64 CPUCycleCount:u64 ReadOperationCount:u32 WriteOperationCount:u32 "
	    "ReadTransferKiloBytes:u32 WriteTransferKiloBytes:u32 HardFaultCount:u32 ImageName:astr" },
	{ K_PROCESS, 3, 0, 1, 3, "ThreadStart/Start", K_THREAD },
	{ K_PROCESS, 3, 1, 1, 3, "ThreadStart/Start", K_THREAD },
	{ K_PROCESS, 4, 0, 2, 4, "ThreadStop/Stop", "ProcessID:u32 ThreadID:u32" },
	{ K_PROCESS, 4, 1, 2, 4, "ThreadStop/Stop", K_THREAD },
	{ K_PROCESS, 5, 0, 1, 5, "ImageLoad/Start", K_IMAGE },
	{ K_PROCESS, 6, 0, 2, 5, "ImageLoad/Stop", K_IMAGE },
	/* Kernel-File, Kernel-Disk, Kernel-Network */
	{ K_FILE, 10, 0, 0, 10, "NameCreate", "FileKey:ptr FileName:ustr" },
	{ K_FILE, 11, 0, 0, 11, "NameDelete", "FileKey:ptr FileName:ustr" },
	{ K_FILE, 12, 0, 0, 12, "Create", "Irp:ptr FileObject:ptr IssuingThreadId:u32 CreateOptions:x32 "
	    "CreateAttributes:x32 ShareAccess:x32 FileName:ustr" },
	{ K_FILE, 14, 0, 0, 14, "Close", "Irp:ptr FileObject:ptr FileKey:ptr IssuingThreadId:u32" },
	{ K_FILE, 15, 0, 0, 15, "Read", K_FILEIO },
	{ K_FILE, 16, 0, 0, 16, "Write", K_FILEIO },
	{ K_FILE, 10, 1, 0, 10, "NameCreate", "FileKey:ptr FileName:ustr" },
	{ K_FILE, 11, 1, 0, 11, "NameDelete", "FileKey:ptr FileName:ustr" },
	{ K_FILE, 12, 1, 0, 12, "Create", "Irp:ptr FileObject:ptr IssuingThreadId:u32 CreateOptions:x32 "
	    "CreateAttributes:x32 ShareAccess:x32 FileName:ustr" },
	{ K_FILE, 14, 1, 0, 14, "Close", "Irp:ptr FileObject:ptr FileKey:ptr IssuingThreadId:u32" },
	{ K_FILE, 15, 1, 0, 15, "Read", K_FILEIO },
	{ K_FILE, 16, 1, 0, 16, "Write", K_FILEIO },
	{ K_DISK, 10, 0, 0, 10, "DiskRead", K_DISKIO },
	{ K_DISK, 11, 0, 0, 11, "DiskWrite", K_DISKIO },
	{ K_NETWORK, 10, 0, 0, 10, "TcpIp/DataSent", K_TCP },
	{ K_NETWORK, 11, 0, 0, 11, "TcpIp/DataReceived", K_TCP },
};

/* Value maps, by provider: names as TraceEvent's enums print them. */
struct ks_map {
	uint8_t prov, bitmap;
	const char *name, *entries;	/* "value:Name ..." */
};

#define GC_REASON "0:AllocSmall 1:Induced 2:LowMemory 3:Empty 4:AllocLarge 5:OutOfSpaceSOH " \
	"6:OutOfSpaceLOH 7:InducedNotForced 8:Internal 9:InducedLowMemory 10:InducedCompacting " \
	"11:LowMemoryHost 12:PMFullGC 13:LowMemoryHostBlocking"

#define METHOD_FLAGS "0:None 1:Dynamic 2:Generic 4:HasSharedGenericCode 8:Jitted 16:JitHelper " \
	"32:ProfilerRejectedPrecompiledCode 64:ReadyToRunRejectedPrecompiledCode"
#define MODULE_FLAGS "0:None 1:DomainNeutral 2:Native 4:Dynamic 8:Manifest 16:IbcOptimized 32:ReadyToRun " \
	"64:PartialReadyToRun"
#define ASSEMBLY_FLAGS "0:None 1:DomainNeutral 2:Dynamic 4:Native 8:Collectible 16:ReadyToRun"
#define APPDOMAIN_FLAGS "0:None 1:Default 2:Executable 4:Shared"
#define STARTUP_MODE "0:None 1:ManagedExe 2:HostedClr 4:IjwDll 8:ComActivated 16:Other"

static const struct ks_map maps[] = {
	{ CLR, 0, "GCReason", GC_REASON },
	{ CLR, 0, "GCType", "0:NonConcurrentGC 1:BackgroundGC 2:ForegroundGC" },
	{ CLR, 0, "GCAllocationKind", "0:Small 1:Large 2:Pinned" },
	{ CLR, 0, "GCSegmentType", "0:SmallObjectHeap 1:LargeObjectHeap 2:ReadOnlyHeap 3:PinnedObjectHeap" },
	{ CLR, 0, "GCSuspendEEReason", "0:SuspendOther 1:SuspendForGC 2:SuspendForAppDomainShutdown "
	    "3:SuspendForCodePitching 4:SuspendForShutdown 5:SuspendForDebugger 6:SuspendForGCPrep "
	    "7:SuspendForDebuggerSweep" },
	{ CLR, 0, "RuntimeSku", "0:None 1:DesktopClr 2:CoreClr" },
	{ CLR_RUNDOWN, 0, "RuntimeSku", "0:None 1:DesktopClr 2:CoreClr" },
	{ CLR, 0, "StartupMode", STARTUP_MODE },
	{ CLR_RUNDOWN, 0, "StartupMode", STARTUP_MODE },
	{ CLR, 1, "ExceptionThrownFlags", "0:None 1:HasInnerException 2:Nested 4:ReThrown 8:CorruptedState "
	    "16:CLSCompliant" },
	{ CLR, 1, "MethodFlags", METHOD_FLAGS },
	{ CLR_RUNDOWN, 1, "MethodFlags", METHOD_FLAGS },
	{ CLR, 1, "ModuleFlags", MODULE_FLAGS },
	{ CLR_RUNDOWN, 1, "ModuleFlags", MODULE_FLAGS },
	{ CLR, 1, "AssemblyFlags", ASSEMBLY_FLAGS },
	{ CLR_RUNDOWN, 1, "AssemblyFlags", ASSEMBLY_FLAGS },
	{ CLR, 1, "AppDomainFlags", APPDOMAIN_FLAGS },
	{ CLR_RUNDOWN, 1, "AppDomainFlags", APPDOMAIN_FLAGS },
};

/* TDH in-types and out-types (tdh.c has the full lists) */
enum {
	IN_USTR = 1, IN_ASTR = 2, IN_U8 = 4, IN_U16 = 6, IN_U32 = 8, IN_U64 = 10, IN_DOUBLE = 12,
	IN_GUID = 15, IN_POINTER = 16, IN_FILETIME = 17, IN_HEX32 = 20, IN_HEX64 = 21,
	OUT_HEX16 = 17, OUT_PORT = 22, OUT_IPV4 = 23
};
enum { PF_PARAM_COUNT = 0x4 };

static const struct {
	const char *name;
	uint16_t in, out;
} types[] = {
	{ "u8", IN_U8, 0 }, { "u16", IN_U16, 0 }, { "u32", IN_U32, 0 }, { "u64", IN_U64, 0 },
	{ "x16", IN_U16, OUT_HEX16 }, { "x32", IN_HEX32, 0 }, { "x64", IN_HEX64, 0 },
	{ "ptr", IN_POINTER, 0 }, { "ustr", IN_USTR, 0 }, { "astr", IN_ASTR, 0 },
	{ "guid", IN_GUID, 0 }, { "ft", IN_FILETIME, 0 }, { "dbl", IN_DOUBLE, 0 },
	{ "ip4", IN_U32, OUT_IPV4 }, { "port", IN_U16, OUT_PORT },
};

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* "e13c0d23-ccbc-..." → the 16 bytes as Windows stores a GUID (first three groups little-endian). */
static void
guid_bytes(const char *s, uint8_t g[16])
{
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t b[16];
	int n = 0;
	for (; *s && n < 16; s++) {
		if (*s == '-')
			continue;
		b[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s++;
	}
	for (int i = 0; i < 16; i++)
		g[i] = b[order[i]];
}

#define MAX_FIELDS 32

/* One row's field list into PROPS (names and map names point into BUF). */
static unsigned
parse_fields(const char *spec, struct tdh_prop_def *props, char *buf, size_t cap)
{
	unsigned n = 0;
	size_t used = 0;
	const char *s = spec;
	while (*s && n < MAX_FIELDS) {
		while (*s == ' ')
			s++;
		size_t len = strcspn(s, " ");
		if (!len || used + len + 1 > cap)
			break;
		char *f = buf + used;
		memcpy(f, s, len);
		f[len] = '\0';
		used += len + 1;
		s += len;
		char *type = strchr(f, ':');
		if (!type)
			continue;
		*type++ = '\0';
		char *map = strchr(type, '='), *count = strchr(type, '[');
		if (map)
			*map++ = '\0';
		if (count) {
			*count++ = '\0';
			count[strcspn(count, "]")] = '\0';
		}
		struct tdh_prop_def *p = &props[n];
		memset(p, 0, sizeof *p);
		p->name = f;
		p->map = map;
		p->count = 1;
		for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
			if (strcmp(types[t].name, type) == 0) {
				p->in = types[t].in;
				p->out = types[t].out;
			}
		if (count)
			for (unsigned k = 0; k < n; k++)
				if (strcmp(props[k].name, count) == 0) {
					p->flags = PF_PARAM_COUNT;
					p->count = (uint16_t)k;
				}
		n++;
	}
	return n;
}

/* Map M as a provider GUID + EVENT_MAP_INFO record (lib/etl/tdhbuild.c). */
static size_t
build_map(const uint8_t guid[16], const struct ks_map *m, uint8_t *out, size_t cap)
{
	uint32_t values[32];
	char names[32][48];
	const char *np[32];
	size_t n = 0;
	for (const char *s = m->entries; *s && n < 32;) {
		while (*s == ' ')
			s++;
		values[n] = (uint32_t)strtoul(s, NULL, 10);
		const char *name = strchr(s, ':');
		if (!name)
			break;
		name++;
		size_t len = strcspn(name, " ");
		if (len >= sizeof names[n])
			len = sizeof names[n] - 1;
		memcpy(names[n], name, len);
		names[n][len] = '\0';
		np[n] = names[n];
		n++;
		s = name + len;
	}
	return tdh_build_map_info(guid, m->name, m->bitmap, values, np, n, out, cap);
}

void
ks_load(void *db, int (*add_event)(void *db, const uint8_t *blob, size_t len),
    int (*add_map)(void *db, const uint8_t *rec, size_t len))
{
	uint8_t guids[NPROV][16];
	for (int i = 0; i < NPROV; i++)
		guid_bytes(providers[i].guid, guids[i]);
	size_t cap = 8192;
	uint8_t *blob = xmalloc(cap);
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		const struct ks_row *row = &rows[r];
		struct tdh_prop_def props[MAX_FIELDS];
		char names[1024];
		unsigned n = parse_fields(row->fields, props, names, sizeof names);
		struct tdh_event_def d = { guids[row->prov], row->id, row->version, 0, 4, row->opcode,
		    row->task, 0, providers[row->prov].name, NULL, NULL, row->name, props, n, n };
		size_t len = tdh_build_event_info(&d, blob, cap);
		if (len <= cap)
			add_event(db, blob, len);
	}
	for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
		size_t len = build_map(guids[maps[m].prov], &maps[m], blob, cap);
		if (len <= cap)
			add_map(db, blob, len);
	}
	free(blob);
}

int
ks_subject_pid(const struct etl_event *ev, unsigned psize, uint32_t *pid)
{
	/* Kernel-Process (providers[K_PROCESS]) in Windows byte order: a constant, as threads ask */
	static const uint8_t kp[16] = { 0xd6, 0x2c, 0xfb, 0x22, 0x7b, 0x0e, 0x2b, 0x42,
	    0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16 };
	if (!ev->guid || ev->hkind != ETL_HK_EVENT || memcmp(ev->guid, kp, 16) != 0)
		return 0;
	size_t at;
	switch (ev->id) {
	case 1: case 2: case 3: case 4:
		at = 0;		/* ProcessID first */
		break;
	case 5: case 6:
		at = 2 * (size_t)psize;	/* after ImageBase and ImageSize */
		break;
	default:
		return 0;
	}
	if (ev->plen < at + 4)
		return 0;
	*pid = etl_u32(ev->payload + at);
	return 1;
}
