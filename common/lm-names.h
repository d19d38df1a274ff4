/* lm-names.h: the names laptop-moded and its clients must agree on.
 * Bus name, object, interface, error names, polkit actions and Reason words
 * are spelled here once; the D-Bus XML documents them, this header types them. */
#pragma once

#define LM_BUS_NAME "org.laptopmode.LaptopMode1"
#define LM_OBJECT_PATH "/org/laptopmode/LaptopMode1"
#define LM_INTERFACE "org.laptopmode.LaptopMode1"

/* Errors a caller can act on (see the XML's header comment). */
#define LM_ERROR_NAME_FAILED LM_INTERFACE ".Error.Failed"
#define LM_ERROR_NAME_INVALID_ARGS LM_INTERFACE ".Error.InvalidArgs"
#define LM_ERROR_NAME_NOT_SUPPORTED LM_INTERFACE ".Error.NotSupported"
#define LM_ERROR_NAME_KERNEL LM_INTERFACE ".Error.Kernel"
/* Too many authorization checks of this caller, its user or everyone are
 * waiting for polkit: try again once one is answered. */
#define LM_ERROR_NAME_BUSY LM_INTERFACE ".Error.Busy"
/* polkit could not be asked or gave no answer: nothing a rule can fix. */
#define LM_ERROR_NAME_AUTH_UNAVAILABLE LM_INTERFACE ".Error.AuthUnavailable"
/* A bound on what one caller, one user or everyone may take was reached:
 * GetLedger's budget of records, Subscribe's caps (lm-limits.h). */
#define LM_ERROR_NAME_LIMIT_EXCEEDED LM_INTERFACE ".Error.LimitExceeded"
/* A caller without the right gets the bus's own error, whatever shape
 * polkit's refusal had (lm-auth-rules.c maps each one). */
#define LM_ERROR_NAME_ACCESS_DENIED "org.freedesktop.DBus.Error.AccessDenied"

/* polkit actions (polkit/org.laptopmode.LaptopMode1.policy). */
#define LM_ACTION_SWITCH LM_INTERFACE ".switch"
#define LM_ACTION_CONFIGURE LM_INTERFACE ".configure"
#define LM_ACTION_MONITOR LM_INTERFACE ".monitor"
#define LM_ACTION_MONITOR_ALL LM_INTERFACE ".monitor-all"
#define LM_ACTION_INHIBIT LM_INTERFACE ".inhibit"
#define LM_ACTION_WAIT_AWAKE LM_INTERFACE ".wait-awake"

/* How clients show a spin-up of another user's process, which the daemon
 * sends without its name, pid or file (OtherUser true): the caller has
 * monitor but not monitor-all. */
#define LM_OTHER_USER_TEXT "another user's process"

/* The Reason property's words. */
#define LM_REASON_MANUAL "manual"
#define LM_REASON_ON_BATTERY "on-battery"
#define LM_REASON_AC "ac"
#define LM_REASON_LOW_BATTERY "low-battery"
#define LM_REASON_INHIBITED "inhibited"
#define LM_REASON_POWER_SAVER "power-saver"

/* The services the daemon listens to (it owns none of them). */
#define LM_LOGIND_NAME "org.freedesktop.login1"
#define LM_LOGIND_PATH "/org/freedesktop/login1"
#define LM_LOGIND_MANAGER LM_LOGIND_NAME ".Manager"
#define LM_LOGIND_SESSION LM_LOGIND_NAME ".Session"
#define LM_LOGIND_SEAT LM_LOGIND_NAME ".Seat"
#define LM_UPOWER_NAME "org.freedesktop.UPower"
#define LM_POLKIT_NAME "org.freedesktop.PolicyKit1"
#define LM_POLKIT_AUTHORITY LM_POLKIT_NAME ".Authority"
