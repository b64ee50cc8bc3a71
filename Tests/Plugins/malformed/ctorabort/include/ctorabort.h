// No public header: jobrunner finds this test plugin through jobrunner_plugin_v1.
