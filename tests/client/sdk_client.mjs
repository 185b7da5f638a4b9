// placeholder: written in this session
process.exit(77);
