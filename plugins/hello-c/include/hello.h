// The hello plugin has no public header: jobrunner finds it through jobrunner_plugin_v1.
